package sockettest

import (
	"time"
)

// moreKinds are the receiving ends measured after the first four (real
// TUIs in simulator PTY panes, internal/tui): they are added to kinds
// when the package loads. Each queues what is typed while it works and
// glues pieces submitted together with no separator.
var moreKinds = map[string]*kind{
	// Gemini CLI 0.61.0: ~0.8 s from Enter to the model request; input
	// typed while it works is queued and sent when the answer ends.
	"gemini": {name: "gemini", queueDelay: 100 * time.Millisecond, latency: linear(800*time.Millisecond, 0),
		collapse: func(p piece) bool { return len([]rune(p.text)) > 1000 }},
	// Qwen Code 0.24.4 (a Gemini CLI fork): queued while working; a
	// draft and the paste glued.
	"qwen": {name: "qwen", queueDelay: 100 * time.Millisecond, latency: linear(800*time.Millisecond, 0),
		collapse: func(p piece) bool { return len([]rune(p.text)) > 1000 }},
	// GitHub Copilot CLI 1.0.102: queued while working.
	"copilot": {name: "copilot", queueDelay: 100 * time.Millisecond, latency: linear(300*time.Millisecond, 0),
		collapse: func(p piece) bool { return false }},
}

func init() {
	for n, k := range moreKinds {
		kinds[n] = k
	}
}
