// Package panelock serializes deliveries to one Herdr pane across every
// herdr-link process of a user on the machine.
//
// A lock is an advisory file lock (flock) on a file in a private runtime
// directory of the user, found from the user id alone, never from the
// environment (MCP hosts pass their servers different environments, and
// every process must find the same directory): /run/user/<uid>/herdr-link
// when /run/user/<uid> is a directory owned by the user, else
// /tmp/herdr-link-<uid>. The directory must be owned by the user, must not
// be a symbolic link, and must grant nothing to group or others (it is
// created 0700). A lock file's name is a hash of the Herdr socket (its
// device and inode when it can be stat'ed, else its cleaned path) and the
// target's terminal id; it holds nothing. The lock lives with the open file: a process that
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

	// local holds the in-process locks where the system has no flock
	// (other.go); empty elsewhere.
	//lint:ignore U1000 used on systems without flock (other.go)
	local localLocks
}

// Errors.
var (
	// ErrUnsafeDir: the lock directory is not private to this user.
	ErrUnsafeDir = errors.New("panelock: lock directory is not private to this user")
)

// DefaultDir returns the lock directory of this user. It depends on the
// user id only: /run/user/<uid>/herdr-link when /run/user/<uid> is a
// directory owned by the user, else /tmp/herdr-link-<uid> (literally /tmp,
// not $TMPDIR).
func DefaultDir() string {
	uid := strconv.Itoa(os.Getuid())
	if run := filepath.Join("/run/user", uid); ownedDir(run) {
		return filepath.Join(run, "herdr-link")
	}
	return filepath.Join("/tmp", "herdr-link-"+uid)
}

func (l *Locker) dir() string {
	if l.Dir != "" {
		return l.Dir
	}
	return DefaultDir()
}

func (l *Locker) poll() time.Duration {
	if l.Poll > 0 {
		return l.Poll
	}
	return 10 * time.Millisecond
}

// Key returns the lock file's base name for a terminal id: 32 hex digits
// of SHA-256 over the scope and the id. It reveals neither. The scope is
// the socket's identity (device and inode) when it can be stat'ed, else
// its cleaned path: every spelling of one socket gives one key.
func (l *Locker) Key(terminalID string) string {
	h := sha256.Sum256([]byte("herdr-link/1 delivery\x00" + scopeID(l.Scope) + "\x00" + terminalID))
	return hex.EncodeToString(h[:16]) + ".lock"
}
