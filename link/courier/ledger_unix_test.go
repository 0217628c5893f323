//go:build unix

package courier_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link/courier"
	"github.com/herdr-link/herdr-link/link/deliver"
)

// A direct send typed but not submitted while another process holds the
// ledger's flock (stopped): AfterTyping gives up after the ledger's own
// wait (about a second), not a hundred of them.
func TestAfterTypingLedgerBusyBounded(t *testing.T) {
	synctest.Test(t, testAfterTypingLedgerBusyBounded)
}

func testAfterTypingLedgerBusyBounded(t *testing.T) {
	st, err := outbox.Open(t.TempDir(), "courier")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Release)
	c := courier.New(courier.Config{Outbox: st, Ports: fakePorts{}})
	rec, err := c.RecordRequest(brain, busy, courier.Sent{ID: "hl_mx5a_b2c3", From: "brain", To: "busy"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(st.Dir, "ledger"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c.AfterTyping(rec, deliver.DeliveryNotSubmitted, nil)
	if got, want := time.Since(start), 2*time.Second; got > want {
		t.Errorf("AfterTyping with the ledger locked elsewhere: took %v, want at most %v", got, want)
	}
}
