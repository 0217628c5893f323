//go:build !windows

package herdrlink

import (
	"os"
	"os/signal"
	"syscall"
)

// ignoreSIGPIPE makes writes to a broken stdout or stderr return EPIPE:
// Go's runtime ends the process on SIGPIPE for fds 1 and 2 unless the
// signal is being handled.
func ignoreSIGPIPE() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGPIPE)
	return func() { signal.Stop(ch) }
}
