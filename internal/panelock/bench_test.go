//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package panelock

import (
	"testing"
	"time"
)

// BenchmarkLock is one uncontended acquisition and release of a target's
// lock, as each send makes, in a lock directory found by the home rule
// (no /run/user/<uid>): "checked once" as a server's Locker makes them,
// "checked each time" with the directory's checks before every lock.
func BenchmarkLock(b *testing.B) {
	for _, tc := range []struct {
		name    string
		recheck bool
	}{{"checked once", false}, {"checked each time", true}} {
		b.Run(tc.name, func(b *testing.B) {
			r, _ := fakeRoots(b, true)
			l := &Locker{Scope: "s", Roots: r}
			for b.Loop() {
				if tc.recheck {
					l.dir.st = nil
				}
				le, err := l.Lock(b.Context(), "t", time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				le.Unlock()
			}
		})
	}
}
