//go:build !herdrlink_e2e

package herdrlink

import "github.com/herdr-link/herdr-link/internal/panelock"

// e2eLockRoots is nil: the lock directory follows the system's roots
// (only a test build moves them; see lockroots_e2e.go).
func e2eLockRoots() *panelock.Roots { return nil }
