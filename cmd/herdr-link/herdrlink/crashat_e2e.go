//go:build herdrlink_e2e

package herdrlink

import (
	"os"
	"strings"
)

// e2eCrashAt, in a test build only (-tags herdrlink_e2e), kills this
// process at the steps of a held delivery named in
// HERDR_LINK_E2E_CRASH_AT (comma-separated, e.g. "claimed" or "typed"):
// SIGKILL, so nothing is cleaned up, as a crash leaves it.
func e2eCrashAt() func(step string) {
	v := os.Getenv("HERDR_LINK_E2E_CRASH_AT")
	if v == "" {
		return nil
	}
	steps := strings.Split(v, ",")
	return func(step string) {
		for _, s := range steps {
			if s == step {
				if p, err := os.FindProcess(os.Getpid()); err == nil {
					_ = p.Kill()
				}
				os.Exit(137)
			}
		}
	}
}
