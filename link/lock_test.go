package link_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link"
)

// errLocker fails every Lock with err.
type errLocker struct{ err error }

func (l errLocker) Lock(context.Context, string, time.Duration) (link.Lease, error) {
	return nil, l.err
}

// A lock that cannot be had fails the send with nothing typed, and says
// what the operator must fix: a directory another user made, a full
// disk, or another failure of the state directory.
func TestUnusableLockSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"not private", fmt.Errorf("%w: /tmp/herdr-link-1000 is owned by another user", panelock.ErrUnsafeDir),
			"SEND_FAILED: the delivery lock is unavailable: herdr-link found no directory private to this user (another user may have made the one it must use); nothing was delivered. The operator can see which directory failed which check with 'herdr-link outbox' and fix it (remove a directory another user made, or give this user a private /run/user directory or a home directory)"},
		{"disk full", fmt.Errorf("panelock: create /home/u/.local: %w", syscall.ENOSPC),
			"SEND_FAILED: the delivery lock is unavailable: the disk holding herdr-link's state directory is full (or over quota); nothing was delivered, the operator must free space"},
		{"over quota", fmt.Errorf("panelock: open lock file: %w", syscall.EDQUOT),
			"SEND_FAILED: the delivery lock is unavailable: the disk holding herdr-link's state directory is full (or over quota); nothing was delivered, the operator must free space"},
		{"read-only", fmt.Errorf("panelock: create /home/u/.local: %w", syscall.EROFS),
			"SEND_FAILED: the delivery lock is unavailable: herdr-link's state directory could not be used ('herdr-link outbox' shows why); nothing was delivered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake("claude", "idle")
				l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Locker: errLocker{tc.err}})
				_, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow})
				if err == nil || err.Error() != tc.want || f.prompts != 0 {
					t.Fatalf("got %v (%d prompts)\nwant %s", err, f.prompts, tc.want)
				}
				if !errors.Is(err, tc.err) {
					t.Errorf("the cause %v is not kept", tc.err)
				}
			})
		})
	}
}
