package herdrlink

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/herdr-link/herdr-link/internal/buildinfo"
)

func (p *prober) finish() bool {
	for _, c := range p.checks {
		if c.Status == fail {
			return false
		}
	}
	return true
}

func useColour(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(w)
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

func (p *prober) print(w io.Writer) {
	colour := useColour(w)
	paint := map[string]string{pass: "\x1b[32m", warn: "\x1b[33m", fail: "\x1b[31m", skip: "\x1b[2m"}
	fmt.Fprintf(w, "herdr-link probe (herdr-link %s)\n", buildinfo.Version())
	for _, c := range p.checks {
		v := strings.ToUpper(c.Status)
		if colour {
			v = paint[c.Status] + v + "\x1b[0m"
		}
		fmt.Fprintf(w, "  %-4s  %-12s %8.2f ms  %s\n", v, c.Name, c.MS, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(w, "  %-4s  %-12s %8s     fix: %s\n", "", "", "", c.Fix)
		}
	}
}
