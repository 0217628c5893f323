//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package panelock

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Lease is a held delivery lock. Its file holds one line: the holder's
// pid, its phase and the lease's deadline (Unix nanoseconds):
//
//	hl-lease/1 0000012345 h 1764620000000000000
//
// The phases are h (held: waiting to type), w (writing: between
// [Lease.Begin] and [Lease.Extend], the prompt in flight), d (done: the
// prompt answered, the holder only watches and holds) and r (released:
// written by the last holder as it let go, the time being that of the
// release). A waiter may break a lease in phase h or d whose deadline has
// passed and whose holder is stopped; never one in phase w, and never r
// (only a new holder that has not written its line yet holds such a file:
// one that is stopped before writing it keeps the lock, as with a new
// file).
type Lease struct {
	f    *os.File
	path string

	mu   sync.Mutex
	done bool
}

const (
	phaseHeld    = 'h'
	phaseWriting = 'w'
	phaseDone    = 'd'
	phaseRelease = 'r'
	recordLen    = len("hl-lease/1 0000012345 h 1764620000000000000\n")
)

type record struct {
	pid   int
	phase byte
	until int64
}

func (le *Lease) write(phase byte, d time.Duration) error {
	line := fmt.Sprintf("hl-lease/1 %010d %c %019d\n", os.Getpid(), phase, time.Now().Add(d).UnixNano())
	if _, err := le.f.WriteAt([]byte(line), 0); err != nil {
		return fmt.Errorf("panelock: write lease: %w", err)
	}
	return nil
}

// readRecord reads the lease line of f; ok is false when there is none
// (a holder that has not written it yet, or an older herdr-link).
func readRecord(f *os.File) (record, bool) {
	var b [recordLen]byte
	if n, _ := f.ReadAt(b[:], 0); n != recordLen || string(b[:11]) != "hl-lease/1 " || b[21] != ' ' || b[23] != ' ' || b[recordLen-1] != '\n' {
		return record{}, false
	}
	pid, err1 := strconv.Atoi(string(b[11:21]))
	until, err2 := strconv.ParseInt(string(b[24:recordLen-1]), 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return record{}, false
	}
	return record{pid: pid, phase: b[22], until: until}, true
}

// Begin is called right before the text is handed to Herdr. It marks the
// lease as writing (a waiter never breaks it from now until [Lease.Extend])
// with a deadline d from now, then checks, under the guard that breakers
// take, that the lease was not broken meanwhile. An error (wrapping
// [ErrLost]) means this process must not type: another delivery may be
// typing.
func (le *Lease) Begin(d time.Duration) error {
	le.mu.Lock()
	defer le.mu.Unlock()
	if le.done {
		return ErrLost
	}
	// The phase first, then the check: a breaker reads the phase under
	// the guard, so either it sees w and leaves the lease alone, or it
	// removed the file before this check, which then fails.
	if err := le.write(phaseWriting, d); err != nil {
		return fmt.Errorf("%w: %v", ErrLost, err)
	}
	release, ok := guard(le.f, beginGuardTries)
	if !ok {
		return fmt.Errorf("%w: the lock's guard stayed taken", ErrLost)
	}
	defer release()
	if !samePath(le.f, le.path) {
		return ErrLost
	}
	return nil
}

// Extend marks the text as handed over (phase d): the lease now lasts d
// from now, for the watch and the hold that follow.
func (le *Lease) Extend(d time.Duration) {
	le.mu.Lock()
	defer le.mu.Unlock()
	if !le.done {
		_ = le.write(phaseDone, d)
	}
}

// Unlock releases the lock; it may be called from any goroutine, more
// than once. The file stays for the next holder (creating it again costs
// more than the lock itself where the directory is on a disk): its line
// is marked released, then the lock let go. A lease that was broken is
// released without touching the file that replaced it (its own file is
// no longer at the path).
func (le *Lease) Unlock() {
	le.mu.Lock()
	defer le.mu.Unlock()
	if le.done {
		return
	}
	le.done = true
	_ = le.write(phaseRelease, 0)
	_ = flock(le.f, syscall.LOCK_UN)
	_ = le.f.Close()
}

// How often the guard is tried, 1 ms apart: a guard is held for a few
// system calls, so only a process stopped inside one keeps it longer.
const (
	guardTries      = 20
	beginGuardTries = 200
)
