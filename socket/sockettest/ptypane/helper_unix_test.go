//go:build unix

package ptypane_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/term"
)

// helperEnv selects the helper program: the test binary, re-executed in a
// pane's terminal, runs helper(mode) instead of the tests.
const helperEnv = "PTYPANE_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

// helper is a tiny terminal program: it puts its terminal in raw mode,
// sets the input modes its mode asks for, prints "armed", then reports
// every chunk of input it reads as "[rx:HEX]" on a line of its own; input
// containing "quit" makes it exit 0.
//
// Modes: echo (bracketed paste on), raw (off), split (the ESC[?2004h
// written in two pieces), off (on, then off again), kitty (bracketed paste
// and kitty flags 11, whose "report all keys" makes Enter ESC[13u), query
// (asks for the cursor position and prints the terminal's answer as
// "[cpr:HEX]"), stubborn (ignores SIGHUP).
func helper(mode string) int {
	old, err := term.MakeRaw(os.Stdin.Fd())
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper: raw mode:", err)
		return 3
	}
	defer term.Restore(os.Stdin.Fd(), old)
	out := os.Stdout
	fmt.Fprint(out, "helper "+mode+" ready\r\n")
	switch mode {
	case "echo":
		fmt.Fprint(out, "\x1b[?2004h")
	case "raw":
	case "split":
		fmt.Fprint(out, "\x1b[?20")
		time.Sleep(100 * time.Millisecond) // two reads on the simulator's side
		fmt.Fprint(out, "04h")
	case "off":
		fmt.Fprint(out, "\x1b[?1;2004h\x1b]0;title \x1b[?2004l\x07\x1b[?2004l")
	case "kitty":
		fmt.Fprint(out, "\x1b[?2004h\x1b[>11u")
	case "query":
		fmt.Fprint(out, "\x1b[6n")
		buf := make([]byte, 64)
		n, _ := os.Stdin.Read(buf)
		fmt.Fprintf(out, "[cpr:%x]\r\n", buf[:n])
	case "kittyquery":
		// How programs detect the kitty keyboard protocol: its query, then
		// a primary device attributes request; once before and once after
		// pushing flags 1.
		for _, q := range []string{"\x1b[?u\x1b[c", "\x1b[>1u\x1b[?u\x1b[c"} {
			fmt.Fprint(out, q)
			fmt.Fprintf(out, "[kq:%x]\r\n", readUntil(os.Stdin, 'c'))
		}
	case "stubborn":
		signal.Ignore(syscall.SIGHUP)
		fmt.Fprint(out, "\x1b[?2004h")
	default:
		fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
		return 3
	}
	fmt.Fprint(out, "armed\r\n")
	var all []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := os.Stdin.Read(buf)
		if n > 0 {
			fmt.Fprintf(out, "[rx:%x]\r\n", buf[:n])
			all = append(all, buf[:n]...)
			if bytes.Contains(all, []byte("quit")) {
				fmt.Fprint(out, "bye\r\n")
				return 0
			}
		}
		if err != nil {
			return 0
		}
	}
}

// readUntil reads r until a read ends with final, or fails.
func readUntil(r *os.File, final byte) []byte {
	var got []byte
	buf := make([]byte, 64)
	for len(got) == 0 || got[len(got)-1] != final {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	return got
}

var rxLine = regexp.MustCompile(`\[rx:([0-9a-f]*)\]`)

// received is every input byte the helper reported, in order.
func received(out []byte) []byte {
	var got []byte
	for _, m := range rxLine.FindAllSubmatch(out, -1) {
		b, err := hex.DecodeString(string(m[1]))
		if err != nil {
			panic(err)
		}
		got = append(got, b...)
	}
	return got
}
