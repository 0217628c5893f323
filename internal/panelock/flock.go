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
// ctx ends (ctx's error is returned). The returned function releases it.
func (l *Locker) Lock(ctx context.Context, terminalID string) (func(), error) {
	dir := l.dir()
	if err := ensureDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, l.Key(terminalID))
	var t *time.Timer
	for {
		f, err := openLockFile(path)
		if err != nil {
			return nil, err
		}
		for {
			err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
			if err == nil || !errors.Is(err, syscall.EWOULDBLOCK) {
				break
			}
			if t == nil {
				t = time.NewTimer(l.poll())
			} else {
				t.Reset(l.poll())
			}
			select {
			case <-ctx.Done():
				t.Stop()
				f.Close()
				return nil, ctx.Err()
			case <-t.C:
			}
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("panelock: flock: %w", err)
		}
		if samePath(f, path) {
			return unlocker(f, path), nil
		}
		// The previous holder removed the file before releasing it.
		f.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
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

func unlocker(f *os.File, path string) func() {
	done := false
	return func() {
		if done {
			return
		}
		done = true
		// Remove while still holding the lock: a waiter that gets this
		// file next sees it is gone and starts over.
		if samePath(f, path) {
			_ = os.Remove(path)
		}
		_ = flock(f, syscall.LOCK_UN)
		_ = f.Close()
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
		return nil, fmt.Errorf("panelock: open lock file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("panelock: %w", err)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || int(sys.Uid) != os.Getuid() || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: lock file %s has another owner or type", ErrUnsafeDir, path)
	}
	return f, nil
}

// ensureDir creates dir 0700 if needed and checks that it is a directory
// (not a link) owned by this user with no group or other permissions.
func ensureDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("panelock: create %s: %w", dir, err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("panelock: %w", err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	switch {
	case !st.IsDir():
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafeDir, dir)
	case !ok || int(sys.Uid) != os.Getuid():
		return fmt.Errorf("%w: %s is owned by another user", ErrUnsafeDir, dir)
	case st.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%w: %s has mode %v, want 0700", ErrUnsafeDir, dir, st.Mode().Perm())
	}
	return nil
}

// ownedDir reports whether dir is a directory (after links) owned by this
// user.
func ownedDir(dir string) bool {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Getuid()
}

// scopeID identifies the socket at path: its device and inode when it can
// be stat'ed (symbolic links followed), else the cleaned path.
func scopeID(path string) string {
	if st, err := os.Stat(path); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			return fmt.Sprintf("inode:%d:%d", uint64(sys.Dev), uint64(sys.Ino))
		}
	}
	return "path:" + filepath.Clean(path)
}
