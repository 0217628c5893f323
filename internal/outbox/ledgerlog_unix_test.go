//go:build linux

package outbox

import (
	"fmt"
	"os"
	"testing"
)

func openFDs(t *testing.T) int {
	t.Helper()
	d, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	return len(d)
}

// Release closes the ledger's descriptors (the reader's and the
// writers').
func TestReleaseClosesLedger(t *testing.T) {
	s := open(t)
	addReq(t, s, "a", "rev")
	var keep []*Store // not collected: their files' finalizers do not run
	before := openFDs(t)
	for i := range 5 {
		o := &Store{Dir: s.Dir, scope: s.scope}
		addReq(t, o, fmt.Sprintf("r%d", i), "rev")
		o.Release()
		keep = append(keep, o)
	}
	if got := openFDs(t) - before; got > 0 {
		t.Errorf("descriptors left open by 5 released stores: got %d, want 0", got)
	}
	_ = keep
}
