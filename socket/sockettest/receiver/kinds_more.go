package receiver

import (
	"time"
)

// moreKinds are the receiving ends measured after the first four (real
// TUIs in simulator PTY panes, internal/tui): they are added to kinds
// when the package loads. Each queues what is typed while it works and
// glues pieces submitted together with no separator.
var moreKinds = map[string]*kind{
	// Gemini CLI 0.61.0: 0.3–0.7 s from the send to the model request;
	// input typed while it works is queued and sent when the answer
	// ends; a draft merged (glued). It trusts pastes because a Herdr
	// pane answers the kitty keyboard protocol's query (a terminal that
	// does not answer makes Gemini treat every paste as untrusted, and an Enter soon
	// after one then becomes a newline). The Enter after a 64 KiB paste
	// is still lost in some runs (the paste stays, with a newline).
	"gemini": {name: "gemini", queueDelay: 100 * time.Millisecond, latency: linear(400*time.Millisecond, 0),
		swallowRisk: bigPaste, swallowAs: "\n",
		collapse: func(p piece) bool { return len([]rune(p.text)) > 1000 }},
	// Qwen Code 0.24.4 (a Gemini CLI fork): queued while working; a
	// draft and the paste glued; 0.6–1.2 s from Enter to the request. A
	// 64 KiB paste races Herdr's Enter 300 ms later: in some runs it is
	// submitted; in others the Enter is lost (the paste stays in the
	// composer) or submits the placeholder "[Pasted Content N chars]"
	// instead of the text (the Enter came before the paste's text was
	// stored behind its placeholder, a React state update).
	"qwen": {name: "qwen", queueDelay: 100 * time.Millisecond, latency: linear(600*time.Millisecond, 0),
		swallowRisk: bigPaste, placeholderRisk: true,
		collapse: func(p piece) bool { return len([]rune(p.text)) > 1000 }},
	// GitHub Copilot CLI 1.0.102: queued while working; a draft merged
	// (glued); 0.3–2 s from Enter to the request, 64 KiB included; the
	// Enter after a 64 KiB paste is lost in some runs, as Qwen Code's.
	"copilot": {name: "copilot", queueDelay: 100 * time.Millisecond, latency: linear(1*time.Second, 0),
		swallowRisk: bigPaste,
		collapse:    func(p piece) bool { return false }},
	// Grok CLI 0.0.34 (Ink 4.4.1): no bracketed paste, so Herdr types
	// raw; Ink reads a chunk that starts with a control character as a
	// control key and Grok drops it whole. Enter while working starts
	// another turn at once, beside the running one (both stream on).
	// 0.3–0.4 s from Enter to the request; reading 64 KiB of raw text
	// takes it seconds, and Herdr's Enter 300 ms after it lands in a
	// text chunk (a "\r" in the composer): the message stays unsent.
	"grok": {name: "grok", raw: true, concurrent: true, queueDelay: 100 * time.Millisecond,
		latency: linear(350*time.Millisecond, 0), rawPerByte: 10 * time.Microsecond,
		collapse: func(p piece) bool { return false }},
}

// dropsChunk reports whether a kind that reads input raw drops a write
// whole: more than one byte, starting with a C0 control below SUB
// (Ink's parseKeypress compares the chunk with "\x1a": a control key).
func (m *Model) dropsChunk(data string) bool {
	return m.k.raw && !m.parser.inPaste && len(m.parser.esc) == 0 &&
		len(data) > 1 && data[0] < 0x1a
}

// bigPaste: the Enter after a paste this large (64 KiB; 0.6 KB was
// always taken) may be lost.
func bigPaste(n int) bool { return n >= 32<<10 }

// MaySwallowPasteEnter reports whether the real TUI of kind may swallow
// the Enter Herdr types after a paste of n bytes: whether it does differs
// from run to run, and a model-vs-TUI comparison allows both (the model
// with and without Behaviour.SwallowEnters).
func MaySwallowPasteEnter(kind string, n int) bool {
	k := kinds[kind]
	return k != nil && k.swallowRisk != nil && k.swallowRisk(n)
}

// MayPlaceholderPasteEnter reports whether the real TUI of kind may
// submit a paste of n bytes as its placeholder (the model with
// Behaviour.PlaceholderEnters).
func MayPlaceholderPasteEnter(kind string, n int) bool {
	return MaySwallowPasteEnter(kind, n) && kinds[kind].placeholderRisk
}

// pasteEnterAtRisk: the composer ends with a paste whose Enter the kind
// may swallow.
func (m *Model) pasteEnterAtRisk() bool {
	n := len(m.composer)
	return m.k.swallowRisk != nil && n > 0 && m.composer[n-1].paste && m.k.swallowRisk(len(m.composer[n-1].text))
}

func init() {
	for n, k := range moreKinds {
		kinds[n] = k
	}
}

// reading moves the end of reading input on by n bytes at perByte.
func (m *Model) reading(n int, perByte time.Duration) {
	if perByte <= 0 {
		return
	}
	start := m.now()
	if m.ingest.After(start) {
		start = m.ingest
	}
	m.ingest = start.Add(time.Duration(n) * perByte)
}
