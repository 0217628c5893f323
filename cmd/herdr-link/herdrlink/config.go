package herdrlink

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/herdr-link/herdr-link/internal/cliflag"
)

func configUsage() string {
	var b strings.Builder
	b.WriteString("Prints what registers this herdr-link binary (its absolute path, symlinks\nresolved) with an agent host; stdout carries only the snippet.\n\nhosts:\n")
	for _, h := range hosts {
		fmt.Fprintf(&b, "  %-9s %s; %s\n", h.Name, h.Summary, h.Where)
	}
	b.WriteString("\nPi 0.73 in one command: " + strings.TrimSpace(piInstall("herdr-link")))
	return b.String()
}

// config prints the registration snippet of one host.
func config(args []string, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-link config [flags] HOST", configUsage(), stderr)
	bin := fs.String("bin", "", "the herdr-link path to write (default: this binary's absolute path)")
	detect := fs.Bool("detect", false, "without HOST: the host of the agent Herdr sees in this pane (HERDR_PANE_ID); prints the config line, then its snippet")
	hostArgs, code, done := cliflag.ParseInterspersed(fs, args, stdout)
	if done {
		return code
	}
	if *detect {
		given := len(hostArgs)
		var err error
		if hostArgs, err = detectArgs(hostArgs); err != nil {
			fmt.Fprintln(stderr, "herdr-link config --detect:", err)
			return 1
		}
		if given == 0 {
			fmt.Fprintf(stdout, "# herdr-link config %s\n", hostArgs[0])
		}
	}
	if len(hostArgs) != 1 {
		if len(hostArgs) == 0 {
			fmt.Fprintln(stderr, "herdr-link config: name one host (see the list below)")
		} else {
			fmt.Fprintf(stderr, "herdr-link config: name one host, not %d (%s)\n", len(hostArgs), strings.Join(hostArgs, ", "))
		}
		fs.Usage()
		return 2
	}
	h, ok := lookupHost(hostArgs[0])
	if !ok {
		fmt.Fprintf(stderr, "herdr-link config: unknown host %q\n", hostArgs[0])
		fs.Usage()
		return 2
	}
	path := *bin
	if path == "" {
		var err error
		if path, err = selfPath(exec.LookPath); err != nil {
			fmt.Fprintln(stderr, "herdr-link config:", err)
			return 1
		}
		if strings.HasPrefix(path, filepath.Join(os.TempDir(), "go-build")) {
			fmt.Fprintf(stderr, "herdr-link config: warning: %s is a temporary binary of `go run` and is deleted when it exits; build or install herdr-link and run its config, or pass -bin\n", path)
		}
	} else if !filepath.IsAbs(path) {
		fmt.Fprintf(stderr, "herdr-link config: -bin %q is not an absolute path\n", path)
		return 2
	}
	if err := writablePath(path); err != nil {
		fmt.Fprintln(stderr, "herdr-link config:", err)
		if *bin != "" {
			return 2
		}
		return 1
	}
	fmt.Fprint(stdout, h.Snippet(path))
	if isTerminal(stdout) {
		fmt.Fprintf(stderr, "\n(%s)\n", h.Where)
	}
	return 0
}

// writablePath refuses a binary path that a host configuration cannot
// carry as written: bytes that are not UTF-8 (JSON and TOML strings
// would hold U+FFFD instead, another path) and control characters (TOML
// forbids DEL and most C0 raw in a string; none belongs in a command).
func writablePath(p string) error {
	if !utf8.ValidString(p) {
		return fmt.Errorf("the binary path %q is not valid UTF-8, which the host configurations (JSON, TOML) cannot name; install herdr-link under a UTF-8 path or pass -bin", p)
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return fmt.Errorf("the binary path %q holds a control character (%U), which the host configurations cannot carry safely; install herdr-link under another path or pass -bin", p, r)
		}
	}
	return nil
}

// selfPath is the running binary's absolute path. When "herdr-link" on
// PATH is this very file (often a symlink that a package manager keeps
// stable across upgrades), that PATH entry is preferred over the resolved,
// versioned path os.Executable reports.
func selfPath(lookPath func(string) (string, error)) (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find this binary's path: %w", err)
	}
	if onPath, err := lookPath("herdr-link"); err == nil {
		if abs, err := filepath.Abs(onPath); err == nil && sameFile(abs, p) {
			return abs, nil
		}
	}
	return filepath.Abs(p)
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
