//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package outbox

import (
	"io/fs"
	"os"
)

// Without flock, no process can tell whether another one runs: every
// owner counts as alive, and a store is used by the process that owns
// its messages only (deliveries are serialized within one process there).

func holdOwner(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

func ownerHeld(string) bool { return true }

func removeOwner(string) {}

func ownedByMe(fs.FileInfo) bool { return true }

// linkCount: hard links are not counted here, every file has one.
func linkCount(fs.FileInfo) uint64 { return 1 }
