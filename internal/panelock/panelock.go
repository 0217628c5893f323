// Package panelock serializes deliveries to one Herdr pane across every
// herdr-link process of a user on the machine.
//
// A lock is an advisory file lock (flock) on a file in a private runtime
// directory of the user: $XDG_RUNTIME_DIR/herdr-link when XDG_RUNTIME_DIR
// names a directory, else herdr-link-<uid> in the system temp directory. The
// directory must be owned by the user, must not be a symbolic link, and
// must grant nothing to group or others (it is created 0700). A lock
// file's name is a hash of the Herdr socket path and the target's terminal
// id; it holds nothing. The lock lives with the open file: a process that
// dies releases it, so a crashed holder never blocks anyone. A releasing
// holder removes the file while it still holds the lock; a waiter that
// then wins the lock on the removed file notices (the path no longer
// names its file) and starts over, so the directory does not fill up.
//
// On systems without flock the lock only serializes within one process.
package panelock

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Locker hands out delivery locks for the targets of one Herdr server. It
// implements link.Locker. Its zero value is not usable; set Scope.
type Locker struct {
	// Scope identifies the Herdr server: its socket path.
	Scope string
	// Dir overrides the lock directory (tests); it is checked like the
	// default one.
	Dir string
	// Poll is the spacing of attempts while the lock is taken (10 ms when
	// zero).
	Poll time.Duration
	// Getenv replaces os.Getenv (tests).
	Getenv func(string) string
}

// Errors.
var (
	// ErrUnsafeDir: the lock directory is not private to this user.
	ErrUnsafeDir = errors.New("panelock: lock directory is not private to this user")
)

// DefaultDir returns the lock directory for getenv (os.Getenv when nil):
// herdr-link in $XDG_RUNTIME_DIR when that is an absolute path to an
// existing directory, else herdr-link-<uid> in the system temp directory.
func DefaultDir(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if x := getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		if st, err := os.Stat(x); err == nil && st.IsDir() {
			return filepath.Join(x, "herdr-link")
		}
	}
	return filepath.Join(os.TempDir(), "herdr-link-"+strconv.Itoa(os.Getuid()))
}

func (l *Locker) dir() string {
	if l.Dir != "" {
		return l.Dir
	}
	return DefaultDir(l.Getenv)
}

func (l *Locker) poll() time.Duration {
	if l.Poll > 0 {
		return l.Poll
	}
	return 10 * time.Millisecond
}

// Key returns the lock file's base name for a terminal id: 32 hex digits
// of SHA-256 over the scope and the id. It reveals neither.
func (l *Locker) Key(terminalID string) string {
	h := sha256.Sum256([]byte("herdr-link/1 delivery\x00" + l.Scope + "\x00" + terminalID))
	return hex.EncodeToString(h[:16]) + ".lock"
}
