// Package bench is the herdr-bench command: peer resolution and tool
// calls measured side by side (herdr-link's socket route, the reference's
// herdr CLI route, tools/call over MCP, and a relay floor), plus the MCP
// handshake tracer. It finds herdr-link and herdr-sim beside its own
// binary, then on PATH, unless -link and -herdr name them.
//
//	herdr-bench [flags]                  the measurement (see -h)
//	herdr-bench mcp [flags] [COMMAND…]   the MCP handshake, every line timed
//	herdr-bench hold [flags]             held delivery: idle vs now, back-to-back, CPU
//	herdr-bench hook [flags]             the plugin's event hook with nothing due
//	herdr-bench wait [flags]             requests and held messages waiting: sends, store sizes, idle CPU
//	herdr-bench relay -socket PATH       the floor route's relay (internal)
//	herdr-bench version
package bench

import (
	"fmt"
	"io"
	"os"

	"github.com/herdr-link/herdr-link/internal/buildinfo"
	"github.com/herdr-link/herdr-link/internal/cliflag"
)

// Run runs herdr-bench with args (without the program name) and returns
// the exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch {
		case cliflag.IsVersion(args[0]) || args[0] == "version":
			fmt.Fprintln(stdout, "herdr-bench", buildinfo.Version())
			return 0
		case args[0] == "mcp":
			return mcp(args[1:], stdin, stdout, stderr)
		case args[0] == "relay":
			return benchRelay(args[1:], stdin, stdout, stderr)
		case args[0] == "hold":
			return hold(args[1:], stdout, stderr)
		case args[0] == "hook":
			return hook(args[1:], stdout, stderr)
		case args[0] == "wait":
			return wait(args[1:], stdout, stderr)
		case args[0] == "help":
			args = []string{"-h"}
		}
	}
	return bench(args, stdin, stdout, stderr)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
