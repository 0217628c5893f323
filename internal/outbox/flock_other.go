//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package outbox

import "os"

// Without flock, a store is used by one process at a time (see
// owner_other.go): the locks are no-ops.

func lockExclusive(*os.File, bool) error { return nil }

const openSafe = 0

func lockJournal(*os.File, bool, int) error { return nil }
func lockWriter(*os.File) error             { return nil }
func unlock(*os.File)                       {}
