// Package panelock serializes deliveries to one Herdr pane across every
// herdr-link process of a user on the machine.
//
// A lock is an advisory file lock (flock) on a file in a private
// directory of the user. The directory is a function of the user id and
// the file system alone, never of the environment (MCP hosts pass their
// servers different environments, and every process must find the same
// directory); see [Locker.DirPath] for the rule. Every component of its path
// is checked: owned by root or the user and writable by nobody else
// (a sticky directory such as /tmp excepted); the directory itself must
// be the user's, mode 0700, not a symbolic link. A directory that fails
// the checks is never used, and no lock is then taken at all: Lock fails
// with [ErrUnsafeDir] and the caller must not deliver.
//
// A lock file's name is a hash of the Herdr socket (its device and inode
// when it can be stat'ed, else its cleaned path) and the target's terminal
// id. It holds one line, the holder's lease: its process id, the phase of
// its delivery and a deadline. A holder that dies releases the lock with
// its file descriptor. A holder that is stopped (SIGSTOP, Ctrl-Z) keeps
// it only until its lease's deadline: after that a waiter that sees the
// holder stopped (every thread of it, on Linux, from /proc) removes the
// file and takes a new one, unless the holder was about to type (see
// [Lease.Begin]). A waiter that wins the lock on a file no longer at the
// path (broken, or swept) notices and starts over. A releasing holder
// leaves the file for the next one, its line marked released (creating
// a file costs more than the lock where the directory is on a disk); the
// first acquisition of a Locker and every sixteenth after it remove a
// few files that nobody holds and nobody released in the last ten
// minutes (left by killed holders, or of targets gone), each only while
// holding its lock, so the directory does not fill up.
//
// On systems without flock the lock only serializes within one process.
package panelock

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync/atomic"
	"time"
)

// Locker hands out delivery locks for the targets of one Herdr server.
// Its zero value is not usable; set Scope.
type Locker struct {
	// Scope identifies the Herdr server: its socket path.
	Scope string
	// Dir overrides the lock directory (tests); it is checked like the
	// default one.
	Dir string
	// Roots overrides where the default directory is looked for (tests);
	// nil is [SystemRoots].
	Roots *Roots
	// Poll is the spacing of attempts while the lock is taken (10 ms when
	// zero).
	Poll time.Duration

	// local holds the in-process locks where the system has no flock
	// (other.go); empty elsewhere.
	//lint:ignore U1000 used on systems without flock (other.go)
	local localLocks
	// acquired counts acquisitions: it paces the sweep of files left by
	// killed holders (flock.go).
	//lint:ignore U1000 used on systems with flock (flock.go)
	acquired atomic.Uint64
	// dir caches the lock directory once checked (dir_unix.go).
	//lint:ignore U1000 used on systems with flock (dir_unix.go)
	dir dirCache
}

// Roots are the places the lock directory of a user is looked for.
type Roots struct {
	// UID is the user.
	UID int
	// Run is the parent of the per-user runtime directories (/run/user).
	Run string
	// Home returns the user's home directory from the user database
	// (not $HOME).
	Home func(uid int) (string, error)
	// Tmp is the shared temporary directory (/tmp), used only when the
	// user has no usable home entry.
	Tmp string
}

// Errors.
var (
	// ErrUnsafeDir: no lock directory private to this user could be
	// found or made; nothing may be delivered unserialized.
	ErrUnsafeDir = errors.New("panelock: lock directory is not private to this user")
	// ErrLost: the lease was broken while its holder was stopped past its
	// deadline; the holder must not type.
	ErrLost = errors.New("panelock: the lease was broken while this process was stopped")
)

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

// isLockName reports whether name is a lock file's name.
func isLockName(name string) bool {
	if len(name) != 37 || name[32:] != ".lock" {
		return false
	}
	_, err := hex.DecodeString(name[:32])
	return err == nil
}

// ScopeID is the identity of the Herdr server the locks are for: its
// socket's device, inode and modification time when it can be stat'ed,
// else its cleaned path. Stores kept beside the locks (the outbox) are keyed by it.
func (l *Locker) ScopeID() string { return scopeID(l.Scope) }
