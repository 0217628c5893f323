package link_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/link"
)

// A held request whose record the store sets aside as damaged (its file
// overwritten with garbage) was never typed: the request ends cancelled,
// with a notice to its sender, and is never counted as typed or handled.
func TestDamagedHeldRequestEndsCancelled(t *testing.T) {
	synctest.Test(t, testDamagedHeldRequestEndsCancelled)
}

func testDamagedHeldRequestEndsCancelled(t *testing.T) {
	e := newCourierEnv(t)
	brain := e.ledgerLink(t, "w1:p1")
	r := mustSend(t, brain, link.SendRequest{To: "busy", Message: "please look"})
	if r.Delivery != link.DeliveryHeld {
		t.Fatalf("got delivery %q, want %q", r.Delivery, link.DeliveryHeld)
	}
	des, err := os.ReadDir(brain.Config().Outbox.Dir)
	if err != nil {
		t.Fatal(err)
	}
	damaged := 0
	for _, de := range des {
		// The held message's file (not the request's record): its name
		// carries the id and the held state.
		if n := de.Name(); strings.Contains(n, r.ID) && strings.HasSuffix(n, ".h") {
			if err := os.WriteFile(filepath.Join(brain.Config().Outbox.Dir, n), []byte("\x00garbage"), 0o600); err != nil {
				t.Fatal(err)
			}
			damaged++
		}
	}
	if damaged != 1 {
		t.Fatalf("got %d held files for %s in %v, want 1", damaged, r.ID, des)
	}
	run(t, brain)
	eventually(t, "a notice about the damaged request", func() bool { return len(notices(e, "w1:p1")) == 1 })
	if n := notices(e, "w1:p1")[0]; n.Notice != "cancelled" || n.About != r.ID {
		t.Errorf("got notice %s about %s, want cancelled about %s", n.Notice, n.About, r.ID)
	}
	w, err := brain.WaitReply(t.Context(), r.ID, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.State != "cancelled" {
		t.Errorf("got state %q, want cancelled", w.State)
	}
	if got := e.w.Inputs("w1:p3"); len(got) != 0 {
		t.Errorf("typed into busy: %q, want nothing", got)
	}
}
