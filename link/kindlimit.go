package link

import "fmt"

// typedLimits are the agent kinds whose TUIs do not reliably take a large
// typed message, with the largest text (wrapper and envelope included,
// in bytes) herdr-link types into them, from their real TUIs in simulator
// panes (docs/hosts.md). Gemini CLI 0.61.0 took every paste up to 48 KiB;
// after one of 64 KiB the Enter is lost in some runs (the text stays in
// the composer). Copilot CLI 1.0.102 took every paste of 16 KiB; from
// 32 KiB on it lost the Enter in some runs, or submitted a reference to a
// file it had saved the paste in. Qwen Code 0.24.4 shows a paste of over
// 1,000 characters as "[Pasted Content N chars]" and, when the Enter
// comes before it has stored the text (a slow or loaded machine), submits
// that placeholder instead: seen at 64, 48 and once at 15 KiB, more often
// the larger the paste. A turn then starts without the message, and the
// sender would be told it was submitted. The other kinds took 256 KiB.
var typedLimits = map[string]int{
	"gemini":  32 << 10,
	"qwen":    8 << 10,
	"copilot": 16 << 10,
}

// kindNames are how errors name a kind with a typed limit.
var kindNames = map[string]string{"gemini": "Gemini CLI", "qwen": "Qwen Code", "copilot": "Copilot CLI"}

// TypedLimit is the largest text herdr-link types into an agent of kind,
// in bytes, or 0 when only the general limits apply.
func TypedLimit(kind string) int { return typedLimits[kind] }

// checkTypedLimit refuses a text too large for the target's kind: nothing
// is typed or held.
func checkTypedLimit(target Agent, text string) error {
	limit := TypedLimit(target.Kind)
	if limit == 0 || len(text) <= limit {
		return nil
	}
	return newErr(SendFailed, detailKindLimit(target.Kind, limit), nil)
}

// detailKindLimit is the fixed sentence of a kind's typed limit.
func detailKindLimit(kind string, limit int) string {
	return fmt.Sprintf("the target agent (%s) does not reliably take a typed message this large: at most %d KiB with herdr-link's wrapper (about %d KiB of message); nothing was delivered. Send a shorter message, or write the text to a file and send its path",
		kindNames[kind], limit>>10, limit>>10-1)
}
