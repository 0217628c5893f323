package herdrstate

import (
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/socket"
)

// TestNameGrammarAgrees: the client's grammar check and the simulator's
// independent one agree on every string up to three characters over an
// alphabet that covers each class and its borders, and on edge cases.
func TestNameGrammarAgrees(t *testing.T) {
	alphabet := []string{"a", "z", "A", "Z", "0", "9", "_", "-", ".", " ", ":", "é", "\x00", "`", "{", "/", "@", "["}
	cases := []string{"", strings.Repeat("a", 32), strings.Repeat("a", 33), "a" + strings.Repeat("9", 31), "reviewer", "shop-brain", "hl-0a1b2c3d", "Bad Name", "w1:p1", "a\n", "ａ"}
	var gen func(prefix string, depth int)
	gen = func(prefix string, depth int) {
		cases = append(cases, prefix)
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			gen(prefix+c, depth-1)
		}
	}
	gen("", 3)
	for _, s := range cases {
		if got, want := socket.ValidAgentName(s), validAgentName(s); got != want {
			t.Errorf("%q: socket.ValidAgentName = %v, simulator = %v", s, got, want)
		}
	}
}

func FuzzNameGrammarAgrees(f *testing.F) {
	for _, s := range []string{"", "a", "reviewer", "Bad", "a-b_c9", strings.Repeat("x", 33)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := socket.ValidAgentName(s), validAgentName(s); got != want {
			t.Fatalf("%q: socket.ValidAgentName = %v, simulator = %v", s, got, want)
		}
	})
}
