//go:build unix

package limitedtest

import (
	"os"
	"syscall"
)

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

// unblock opens and closes the read end without waiting for a writer.
func unblock(path string) {
	if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		_ = r.Close()
	}
}
