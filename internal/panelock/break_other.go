//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package panelock

import "os"

// Without /proc a waiter cannot tell a stopped holder from a working
// one, so leases are never broken, and no guard is needed: only a holder
// removes its lock file.
func guard(*os.File, int) (func(), bool) { return func() {}, true }

func breakStopped(*os.File, string) bool { return false }
