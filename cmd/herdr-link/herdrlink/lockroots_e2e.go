//go:build herdrlink_e2e

package herdrlink

import (
	"errors"
	"os"
	"strings"

	"github.com/herdr-link/herdr-link/internal/panelock"
)

// e2eLockRoots, in a test build only (-tags herdrlink_e2e), takes the
// lock directory's roots from HERDR_LINK_E2E_LOCK_ROOTS=run|home|tmp (an
// empty home: the user has none), so process tests can pre-empt them.
func e2eLockRoots() *panelock.Roots {
	v, ok := os.LookupEnv("HERDR_LINK_E2E_LOCK_ROOTS")
	if !ok {
		return nil
	}
	parts := strings.Split(v, "|")
	if len(parts) != 3 {
		return nil
	}
	home := parts[1]
	return &panelock.Roots{UID: os.Getuid(), Run: parts[0], Tmp: parts[2], Home: func(int) (string, error) {
		if home == "" {
			return "", errors.New("no home")
		}
		return home, nil
	}}
}
