//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package outbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// holdOwner creates the owner file at path and takes its flock for the
// life of the process (the descriptor is never closed until Release).
// The file is locked under a temporary name first and then renamed into
// place (tokens are random, 64 bits), so that no other process ever sees
// path unlocked: a Prune running between the creation and the flock
// would take the owner for gone and remove its file, and this process
// would then hold the lock of a file nobody can see.
func holdOwner(path string) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-owner-*")
	if err != nil {
		return nil, fmt.Errorf("outbox: owner file: %w", err)
	}
	tmp := f.Name()
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("outbox: owner lock: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("outbox: owner file: %w", err)
	}
	return f, nil
}

// ownerHeld reports whether some process holds the flock of the owner
// file at path. A missing file is a process that is gone.
func ownerHeld(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	defer f.Close()
	if err := flock(f, syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = flock(f, syscall.LOCK_UN)
	return false
}

// removeOwner removes the owner file of a process that is gone, while
// holding its flock (so never one that a live process holds).
func removeOwner(path string) {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if flock(f, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		_ = os.Remove(path)
	}
}

func ownedByMe(st fs.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Getuid()
}

// linkCount is the number of hard links of the file st (0 when unknown).
func linkCount(st fs.FileInfo) uint64 {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	return uint64(sys.Nlink)
}
