package herdrlink

import (
	"os"
	"testing"
)

// beMain set to 1 makes the test binary run as herdr-link itself, for the
// tests that need the command as a process.
const beMain = "HERDR_LINK_TEST_BE_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(beMain) == "1" {
		os.Exit(Main())
	}
	os.Exit(m.Run())
}
