package deliver

import "strings"

// The values of a delivery (link's SendResult.Delivery).
const (
	// DeliverySubmitted: the target was not working, and Herdr showed it
	// change state after the prompt (a turn started).
	DeliverySubmitted = "submitted"
	// DeliveryQueued: the target was working and its kind (claude,
	// opencode, pi, omp) queues input until the current turn ends.
	DeliveryQueued = "queued"
	// DeliveryInterrupting: the target was working and its kind (codex)
	// submits at once, interrupting the running turn.
	DeliveryInterrupting = "interrupting"
	// DeliveryUnconfirmed: no sign of a submission within the budget, or
	// fast mode, or an agent kind whose handling of input while working is
	// not known. The text is in the pane; whether it was submitted is not.
	DeliveryUnconfirmed = "unconfirmed"
	// DeliveryNotSubmitted: typed, and no turn started with it; after the
	// watch the target's screen still shows text in its composer (its
	// Enter went to a dialog, or was lost): the text sits there unsent.
	// It is never typed again. See [Deliverer.stillInComposer].
	DeliveryNotSubmitted = "not_submitted"
)

// WorkingBehaviour is what an agent of kind does with a delivery while it
// is working: DeliveryQueued, DeliveryInterrupting, or "" when not known
// (the delivery is then watched as for an idle target and reported
// submitted only on a new turn, else unconfirmed).
func WorkingBehaviour(kind string) string {
	switch kind {
	case "claude", "opencode", "pi", "omp", "gemini", "qwen", "copilot":
		return DeliveryQueued
	case "codex":
		return DeliveryInterrupting
	}
	return ""
}

// TakesRawInput reports whether an agent of kind is known to take typed
// text raw: its TUI never turns bracketed paste on, so Herdr's text
// arrives as keystrokes. Grok CLI (0.0.34, Ink 4) is one: Ink reads a
// chunk of input by its first byte, and a chunk that starts with a
// control character (the wrapper's first line break) is a control key,
// which Grok CLI drops whole.
func TakesRawInput(kind string) bool {
	return kind == "grok"
}

// TypedText is the text herdr-link types into an agent of kind for text
// (a wrapper or a notice, which begin with a line break). For a kind that
// takes input raw, the leading control characters are left out, so the
// first chunk the TUI reads starts with printable text; the lines after
// the first, the envelope line among them, are unchanged. Other kinds get
// text as it is (inside a bracketed paste the line break is text).
func TypedText(kind, text string) string {
	if !TakesRawInput(kind) {
		return text
	}
	return strings.TrimLeftFunc(text, func(r rune) bool { return r < 0x20 || r == 0x7f })
}
