//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package outbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
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

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
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

// lockTries bounds the wait for a record's flock: its holders keep it
// for a read or a write of a few hundred bytes, unless they are stopped.
const (
	lockTries = 100
	lockPause = 2 * time.Millisecond
)

// lockShared takes f's shared flock, waiting a little (ErrBusy after).
func lockShared(f *os.File) error { return lockWithin(f, syscall.LOCK_SH, lockTries, sleepPause) }

// lockExclusive takes f's exclusive flock; wait false tries once.
func lockExclusive(f *os.File, wait bool) error {
	tries := 1
	if wait {
		tries = lockTries
	}
	return lockWithin(f, syscall.LOCK_EX, tries, sleepPause)
}

func sleepPause() { time.Sleep(lockPause) }

// lockWithin takes f's flock (how: LOCK_SH or LOCK_EX), trying tries
// times and calling pause between tries: ErrBusy when it stays held.
func lockWithin(f *os.File, how, tries int, pause func()) error {
	for i := 0; ; i++ {
		err := flock(f, how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, syscall.EWOULDBLOCK):
			return fmt.Errorf("outbox: flock: %w", err)
		case i+1 >= tries:
			return ErrBusy
		}
		pause()
	}
}

// openSafe opens a store file without following a link, and without
// waiting for a writer when it is a FIFO (its type is checked next).
const openSafe = syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// lockJournal takes the journal's flock (exclusive when excl), trying
// tries times, yielding between tries but never sleeping: its caller
// holds the store's mutex, and a sleep under it would stall every other
// user of the store (and, under testing/synctest, the bubble's clock).
// Its holders keep it for a read and a write of a few hundred bytes; a
// caller that cannot have it falls back to listing the directory.
func lockJournal(f *os.File, excl bool, tries int) error {
	how := syscall.LOCK_SH
	if excl {
		how = syscall.LOCK_EX
	}
	return lockWithin(f, how, tries, runtime.Gosched)
}

func unlock(f *os.File) { _ = flock(f, syscall.LOCK_UN) }
