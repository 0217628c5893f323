//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package outbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

// flock takes (how) or releases f's flock, again when a signal
// interrupted it.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// lockTries bounds the wait for a record's flock: its holders keep it
// for a read or a write of a few hundred bytes, unless they are stopped.
const (
	lockTries = 100
	lockPause = 2 * time.Millisecond
)

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

// lockWriter takes the exclusive flock of a file appended to under it
// (the ledger, the journal). Its holders keep it for a line's write, or
// for a notice's (EndRequest's before): tried at once a few times, then
// every millisecond for about a second (ErrBusy after: a holder
// stopped). A writer that gave up sooner would leave its change
// undescribed to the others.
func lockWriter(f *os.File) error {
	tries := 0
	return lockWithin(f, syscall.LOCK_EX, writerTries, func() {
		if tries++; tries < writerSpins {
			runtime.Gosched()
			return
		}
		time.Sleep(time.Millisecond)
	})
}

const (
	writerSpins = 50
	writerTries = writerSpins + 1000
)
