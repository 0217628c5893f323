//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package panelock

import "os"

// Without /proc a waiter cannot tell a stopped holder from a working
// one, so leases are never broken, and no guard is needed: a lock file
// is removed only by the process that holds its lock (the sweep).
func guard(*os.File, int) (func(), bool) { return func() {}, true }

func breakStopped(*os.File, string) bool { return false }
