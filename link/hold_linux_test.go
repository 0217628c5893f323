package link_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/herdr-link/herdr-link/link"
)

// A message to a busy agent that cannot be held because the disk is full
// fails, nothing delivered, and says the disk is full (not that no
// private directory exists).
func TestHoldOnAFullDisk(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to mount a small file system")
	}
	e := newCourierEnv(t)
	if err := syscall.Mount("tmpfs", e.box, "tmpfs", 0, "size=256k,mode=0700"); err != nil {
		t.Skipf("no tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(e.box, syscall.MNT_DETACH) })
	brain := e.link(t, "w1:p1")
	// The owner file and the journal exist; then fill every block.
	if _, err := brain.Config().Outbox.Token(); err != nil {
		t.Fatal(err)
	}
	if _, err := brain.Config().Outbox.List(); err != nil {
		t.Fatal(err)
	}
	fill, err := os.Create(filepath.Join(e.box, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := fill.Write(make([]byte, 4096)); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	fill.Close()
	_, err = brain.Send(t.Context(), link.SendRequest{To: "busy", Message: "hello", ExpectReply: new(false)})
	const want = "SEND_FAILED: the target agent cannot take the message yet and it could not be held: the disk holding herdr-link's outbox is full (or over quota); nothing was delivered, the operator must free space"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	if p := e.w.Prompts("w1:p3"); len(p) != 0 {
		t.Errorf("typed into the busy agent: %q", p)
	}
}
