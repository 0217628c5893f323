package herdrstate

import (
	"bytes"
	"testing"
)

// FuzzURLAt: a found link covers the column, lies within the line and
// starts with a scheme.
func FuzzURLAt(f *testing.F) {
	f.Add("see https://herdr.dev/docs now", 8)
	f.Add("http://a http://b", 9)
	f.Add("ünïcode https://x.y/ü", 12)
	f.Fuzz(func(t *testing.T, line string, col int) {
		s, e, ok := urlAt(line, col)
		if !ok {
			return
		}
		rs := []rune(line)
		if s < 0 || e >= len(rs) || s > e || col < s || col > e {
			t.Fatalf("urlAt(%q, %d) = %d, %d", line, col, s, e)
		}
		if u := string(rs[s:]); !bytes.HasPrefix([]byte(u), []byte("http://")) && !bytes.HasPrefix([]byte(u), []byte("https://")) {
			t.Fatalf("urlAt(%q, %d) starts at %q", line, col, u)
		}
	})
}
