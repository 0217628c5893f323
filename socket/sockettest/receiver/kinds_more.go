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
	// ends; a draft merged (glued). (On a loaded machine it drops an
	// Enter now and then, a 64 KiB paste's mostly; not modelled.)
	"gemini": {name: "gemini", queueDelay: 100 * time.Millisecond, latency: linear(400*time.Millisecond, 0),
		collapse: func(p piece) bool { return len([]rune(p.text)) > 1000 }},
	// Qwen Code 0.24.4 (a Gemini CLI fork): queued while working; a
	// draft and the paste glued; 0.6–1.2 s from Enter to the request. A
	// 64 KiB paste is still being read when Enter comes 300 ms later and
	// stays in the composer (a 0.6 KB one is not): 50 µs per byte puts
	// the limit near 6 KB.
	"qwen": {name: "qwen", queueDelay: 100 * time.Millisecond, latency: linear(600*time.Millisecond, 0), pastePerByte: 50 * time.Microsecond,
		collapse: func(p piece) bool { return len([]rune(p.text)) > 1000 }},
	// GitHub Copilot CLI 1.0.102: queued while working; a draft merged
	// (glued); 0.3–2 s from Enter to the request, 64 KiB included.
	"copilot": {name: "copilot", queueDelay: 100 * time.Millisecond, latency: linear(1*time.Second, 0),
		collapse: func(p piece) bool { return false }},
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
