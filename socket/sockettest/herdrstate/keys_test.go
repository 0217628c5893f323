package herdrstate

import (
	"strings"
	"testing"
)

// TestKeyEncoding: Herdr's key names and the bytes it writes for them
// (the cases of upstream's send-keys tests, src/app/api/panes.rs, and
// its legacy and kitty encoders, src/input/encode.rs).
func TestKeyEncoding(t *testing.T) {
	legacy := keyEncoding{enter: "\r"}
	kitty := keyEncoding{enter: "\r", kitty: 1}
	allKeys := keyEncoding{enter: "\x1b[13u", kitty: 11}
	tests := []struct {
		key  string
		enc  keyEncoding
		want string // "" with bad: refused
		bad  bool
	}{
		{"Enter", legacy, "\r", false},
		{"return", legacy, "\r", false},
		{"Escape", legacy, "\x1b", false},
		{"esc", kitty, "\x1b[27u", false}, // kitty disambiguates Escape
		{"x", kitty, "x", false},          // text stays text
		{"x", allKeys, "\x1b[120u", false},
		{"Enter", allKeys, "\x1b[13u", false},
		{"ctrl+u", allKeys, "\x1b[117;5u", false},
		{"tab", kitty, "\t", false},
		{"ctrl+u", legacy, "\x15", false},
		{"CTRL+U", legacy, "\x15", false},
		{"ctrl+u", kitty, "\x1b[117;5u", false},
		{"C-c", legacy, "\x03", false},
		{"c-c", legacy, "\x03", false},
		{"ctrl+h", legacy, "\x08", false},
		{"ctrl+j", legacy, "\n", false},
		{"shift+tab", legacy, "\x1b[Z", false},
		{"tab", legacy, "\t", false},
		{"+", legacy, "+", false},
		{"plus", legacy, "+", false},
		{"space", legacy, " ", false},
		{"backspace", legacy, "\x7f", false},
		{"bs", legacy, "\x7f", false},
		{"A", legacy, "A", false},
		{"shift+a", legacy, "A", false},
		{"shift+1", legacy, "1", false},
		{"alt+x", legacy, "\x1bx", false},
		{"alt+up", legacy, "\x1b[1;3A", false},
		{"shift+right", legacy, "\x1b[1;2C", false},
		{"ctrl+left", legacy, "\x1b[1;5D", false},
		{"ctrl+left", kitty, "\x1b[1;5D", false}, // arrows keep their xterm form
		{"up", legacy, "\x1b[A", false},
		{"f1", legacy, "\x1bOP", false},
		{"F5", legacy, "\x1b[15~", false},
		{"shift+f5", legacy, "\x1b[15;2~", false},
		{"ctrl+[", legacy, "\x1b", false},
		{"ctrl+/", legacy, "\x1f", false},
		{"é", legacy, "é", false},
		{" Enter ", legacy, "\r", false},
		{"ctrl+enter", kitty, "\x1b[13;5u", false},
		{"C-u", legacy, "", true}, // tmux syntax is not Herdr's
		{"ctrl-u", legacy, "", true},
		{"Delete", legacy, "", true},
		{"Home", legacy, "", true},
		{"PageUp", legacy, "", true},
		{"not-a-key", legacy, "", true},
		{" prefix+h ", legacy, "", true},
		{"ctrl", legacy, "", true},
		{"ctrl+", legacy, "", true},
		{"a+b", legacy, "", true},
		{"", legacy, "", true},
		{"f", legacy, "f", false}, // one character, not an F-key
		{"f256", legacy, "", true},
	}
	for _, tt := range tests {
		k, ok := parseKey(tt.key)
		if ok == tt.bad {
			t.Errorf("%q: accepted %v", tt.key, ok)
			continue
		}
		if ok {
			if got := tt.enc.encode(k); got != tt.want {
				t.Errorf("%q (kitty %d): %q, want %q", tt.key, tt.enc.kitty, got, tt.want)
			}
		}
	}
	if _, bad, ok := parseKeys([]string{"ctrl+h", "not-a-key", "C-u"}); ok || bad != "not-a-key" {
		t.Errorf("parseKeys: first refused %q", bad)
	}
}

// FuzzParseKey: surrounding spaces and the case of modifiers never change
// whether a key is accepted or its bytes.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"ctrl+u", "Enter", "shift+tab", "alt+F5", "C-c", "+", "x", "ctrl++"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k1, ok1 := parseKey(s)
		k2, ok2 := parseKey(" \t" + s + " ")
		if ok1 != ok2 || k1 != k2 {
			t.Fatalf("parseKey(%q) = %#v, %v; want %#v, %v as for %q", " \t"+s+" ", k2, ok2, k1, ok1, s)
		}
		up := strings.NewReplacer("ctrl+", "CTRL+", "alt+", "Alt+", "shift+", "SHIFT+").Replace(s)
		k3, ok3 := parseKey(up)
		if strings.HasPrefix(strings.TrimSpace(s), "C-c") || strings.HasPrefix(strings.TrimSpace(s), "c-c") {
			return
		}
		if ok1 != ok3 || k1 != k3 {
			t.Fatalf("parseKey(%q) = %#v, %v; want %#v, %v as for %q", up, k3, ok3, k1, ok1, s)
		}
		if ok1 {
			_ = keyEncoding{enter: "\r", kitty: 1}.encode(k1)
			_ = keyEncoding{enter: "\r"}.encode(k1)
		}
	})
}
