package hosttest

import (
	"os"
	"testing"
)

// TestMain runs the MCP tap (tap.go) when the test binary is started as
// one, the tests otherwise.
func TestMain(m *testing.M) {
	if IsTap() {
		os.Exit(TapMain())
	}
	os.Exit(m.Run())
}
