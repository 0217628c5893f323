//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package panelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// localLocks is empty: flock serialises deliveries across processes.
//
//lint:ignore U1000 used on systems without flock (other.go)
type localLocks struct{}

// Lock waits until this process holds the delivery lock of terminalID or
// ctx ends (ctx's error is returned). The lease lasts d from now: a
// holder stopped past it may lose the lock to a waiter (see [Lease]).
func (l *Locker) Lock(ctx context.Context, terminalID string, d time.Duration) (*Lease, error) {
	dir, err := l.DirPath()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, l.Key(terminalID))
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		f, err := openLockFile(path)
		if err != nil {
			return nil, err
		}
		if err := l.wait(ctx, f, path, &t); err != nil {
			f.Close()
			if errors.Is(err, errBroken) {
				continue // the stopped holder's file is gone: take a new one
			}
			return nil, err
		}
		if samePath(f, path) {
			le := &Lease{f: f, path: path}
			if err := le.write(phaseHeld, d); err != nil {
				le.Unlock()
				return nil, err
			}
			if l.acquired.Add(1)%sweepEvery == 1 {
				sweep(dir, path)
			}
			return le, nil
		}
		// The previous holder removed the file before releasing it.
		f.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// errBroken: the waiter broke the lease of a stopped holder, or another
// waiter did and the path names a new file.
var errBroken = errors.New("panelock: lease broken")

// wait takes the flock of f, polling, and breaks the lease of a holder
// stopped past its deadline (errBroken).
func (l *Locker) wait(ctx context.Context, f *os.File, path string, t **time.Timer) error {
	for {
		err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("panelock: flock: %w", err)
		}
		// A file whose lease was broken stays locked by its stopped
		// holder: its waiters start over on the file now at the path.
		if breakStopped(f, path) || !samePath(f, path) {
			return errBroken
		}
		if *t == nil {
			*t = time.NewTimer(l.poll())
		} else {
			(*t).Reset(l.poll())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-(*t).C:
		}
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

// samePath reports whether path still names the open file f.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(path)
	return err == nil && os.SameFile(a, b)
}

func openLockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%w: lock file %s is a symbolic link", ErrUnsafeDir, filepath.Base(path))
		}
		return nil, fmt.Errorf("panelock: open lock file: %w", err)
	}
	if err := checkLockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func checkLockFile(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("panelock: %w", err)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || int(sys.Uid) != os.Getuid() || !st.Mode().IsRegular() {
		return fmt.Errorf("%w: lock file %s has another owner or type", ErrUnsafeDir, filepath.Base(f.Name()))
	}
	return nil
}

// sweep removes up to a few lock files that nobody holds and nobody used
// lately (left by killed holders, or released over keepReleased ago)
// among the first entries of dir, never own and never one that is held:
// each is removed only while this process holds its lock. A file
// released lately is left without taking its lock (a sender may be about
// to take it).
func sweep(dir, own string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	ents, _ := d.ReadDir(sweepScan)
	d.Close()
	tried := 0
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if tried == sweepTry || !e.Type().IsRegular() || !isLockName(e.Name()) || p == own {
			continue
		}
		f, err := os.OpenFile(p, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		if checkLockFile(f) == nil && unused(f, time.Now()) {
			tried++
			if flock(f, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
				if unused(f, time.Now()) { // read again under the lock
					removeHeld(f, p)
				}
				_ = flock(f, syscall.LOCK_UN)
			}
		}
		f.Close()
	}
}

// unused reports whether f's line, read at now, is not a release of the
// last keepReleased: no line (a holder killed before writing it), a
// holder's line (killed: a live one holds the lock), or an old release.
func unused(f *os.File, now time.Time) bool {
	rec, ok := readRecord(f)
	return !ok || rec.phase != phaseRelease || now.UnixNano()-rec.until > int64(keepReleased)
}

// The bounds of one sweep: entries read, files tried; and its pace: a
// Locker sweeps on its first acquisition and every sweepEvery-th after it
// (a sweep reads the directory, which also holds the outboxes: per
// acquisition it cost more than the lock itself). A released file stays
// keepReleased for its target's next delivery.
const (
	sweepScan    = 32
	sweepTry     = 4
	sweepEvery   = 16
	keepReleased = 10 * time.Minute
)

// removeHeld removes path while this process holds f's lock, if path
// still names f; under the guard that lease breakers take.
func removeHeld(f *os.File, path string) {
	release, ok := guard(f, guardTries)
	if !ok {
		return // left for a later sweep
	}
	defer release()
	if samePath(f, path) {
		_ = os.Remove(path)
	}
}
