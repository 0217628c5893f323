//go:build unix

package bins

import (
	"os"
	"syscall"
	"time"
)

// lock takes an exclusive lock on path, waiting for it, and touches it.
func lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	now := time.Now()
	_ = os.Chtimes(path, now, now)
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
