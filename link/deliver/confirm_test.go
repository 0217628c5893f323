package deliver_test

import (
	"testing"

	"github.com/herdr-link/herdr-link/link/deliver"
)

func TestSeqSteps(t *testing.T) {
	for _, tc := range []struct {
		then, now, want uint64
	}{
		{5, 5, 0},
		{5, 7, 2},
		{1<<64 - 1, 1, 2}, // wrapped: forward
		{7, 5, 1},         // back (a restarted Herdr): one step
	} {
		if got := deliver.SeqSteps(tc.then, tc.now); got != tc.want {
			t.Errorf("SeqSteps(%d, %d): got %d, want %d", tc.then, tc.now, got, tc.want)
		}
	}
}
