package courier

import (
	"testing"

	"github.com/herdr-link/herdr-link/link/deliver"
)

// TestCompletedSince: a request typed by this process counts a completion
// only when Herdr's completion_seq stepped since the typing; without the
// counter, or without the value at typing, nothing is known.
func TestCompletedSince(t *testing.T) {
	var r completions
	r.note("w1:p2", deliver.Agent{Seq: 7, CompletionSeq: deliver.SeqOf(3)})
	r.note("w1:p3", deliver.Agent{Seq: 9}) // Herdr without the counter
	for _, tc := range []struct {
		name            string
		pane            string
		seq             uint64
		now             deliver.Agent
		completed, know bool
	}{
		{"no completion since", "w1:p2", 7, deliver.Agent{CompletionSeq: deliver.SeqOf(3)}, false, true},
		{"a completion since", "w1:p2", 7, deliver.Agent{CompletionSeq: deliver.SeqOf(4)}, true, true},
		{"a counter that went back (a restarted Herdr)", "w1:p2", 7, deliver.Agent{CompletionSeq: deliver.SeqOf(0)}, true, true},
		{"no counter now", "w1:p2", 7, deliver.Agent{}, false, false},
		{"typed by another process", "w1:p2", 8, deliver.Agent{CompletionSeq: deliver.SeqOf(5)}, false, false},
		{"typed without the counter", "w1:p3", 9, deliver.Agent{CompletionSeq: deliver.SeqOf(5)}, false, false},
		{"typed seq unknown", "w1:p2", 0, deliver.Agent{CompletionSeq: deliver.SeqOf(5)}, false, false},
	} {
		completed, known := r.completedSince(tc.pane, tc.seq, tc.now)
		if completed != tc.completed || known != tc.know {
			t.Errorf("%s: got completed %v, known %v; want %v, %v", tc.name, completed, known, tc.completed, tc.know)
		}
	}
	r.forget("w1:p2", 7)
	if _, k := r.completedSince("w1:p2", 7, deliver.Agent{CompletionSeq: deliver.SeqOf(4)}); k {
		t.Error("known after forget")
	}
}
