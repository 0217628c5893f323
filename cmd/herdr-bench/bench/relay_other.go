//go:build !linux

package bench

import (
	"fmt"
	"io"
)

// benchRelay needs Unix sockets and blocking system calls.
func benchRelay(_ []string, _ io.Reader, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "herdr-bench relay: needs a Unix system")
	return 1
}
