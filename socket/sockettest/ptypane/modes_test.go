package ptypane

import (
	"bytes"
	"testing"
)

func modesOf(chunks ...string) termModes {
	var m termModes
	for _, c := range chunks {
		m.Write([]byte(c))
	}
	return m
}

func TestModes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		out       string
		bracketed bool
		enter     string
	}{
		{"nothing", "plain text\r\n", false, "\r"},
		{"on", "\x1b[?2004h", true, "\r"},
		{"on then off", "\x1b[?2004h\x1b[?2004l", false, "\r"},
		{"several params", "\x1b[?1049;2004;25h", true, "\r"},
		{"other mode", "\x1b[?2005h\x1b[?200h\x1b[?20040h", false, "\r"},
		{"not private", "\x1b[2004h", false, "\r"},
		{"wrong marker", "\x1b[>2004h", false, "\r"},
		{"intermediate", "\x1b[?2004$h", false, "\r"},
		{"inside OSC (BEL)", "\x1b]0;\x1b[?2004h", true, "\r"}, // ESC ends the OSC: a new sequence
		{"OSC payload", "\x1b]0;[?2004h\x07", false, "\r"},
		{"DCS payload", "\x1bP[?2004h\x1b\\", false, "\r"},
		{"APC payload", "\x1b_[?2004h\x1b\\after", false, "\r"},
		{"after OSC", "\x1b]0;title\x07\x1b[?2004h", true, "\r"},
		{"after ST", "\x1b]0;title\x1b\\\x1b[?2004h", true, "\r"},
		{"CAN aborts", "\x1b[?20\x1804h", false, "\r"},
		{"SUB aborts", "\x1b[?20\x1a04h", false, "\r"},
		{"C0 inside", "\x1b[?20\n04h", true, "\r"},
		{"ESC restarts", "\x1b[?20\x1b[?2004h", true, "\r"},
		{"RIS resets", "\x1b[?2004h\x1b[>8u\x1bc", false, "\r"},
		{"8-bit CSI ignored", "\x9b?2004h", false, "\r"},
		{"kitty disambiguate", "\x1b[>1u", false, "\r"},
		{"kitty report all", "\x1b[>8u", false, "\x1b[13u"},
		{"kitty 11", "\x1b[>11u", false, "\x1b[13u"},
		{"kitty pop", "\x1b[>1u\x1b[>8u\x1b[<u", false, "\r"},
		{"kitty pop 2", "\x1b[>8u\x1b[>1u\x1b[>8u\x1b[<2u", false, "\x1b[13u"},
		{"kitty pop empty", "\x1b[<5u", false, "\r"},
		{"kitty set", "\x1b[=8u", false, "\x1b[13u"},
		{"kitty set or", "\x1b[>1u\x1b[=8;2u", false, "\x1b[13u"},
		{"kitty set and-not", "\x1b[>9u\x1b[=8;3u", false, "\r"},
		{"kitty query is no change", "\x1b[?u", false, "\r"},
		{"too many params", "\x1b[?" + string(bytes.Repeat([]byte("1;"), 40)) + "2004h", false, "\r"},
	} {
		m := modesOf(tc.out)
		if m.Bracketed() != tc.bracketed || m.Enter() != tc.enter {
			t.Errorf("%s: %q: bracketed %v enter %q, want %v %q", tc.name, tc.out, m.Bracketed(), m.Enter(), tc.bracketed, tc.enter)
		}
		// Any split gives the same modes.
		for i := 0; i <= len(tc.out); i++ {
			s := modesOf(tc.out[:i], tc.out[i:])
			if s.Bracketed() != m.Bracketed() || s.KittyFlags() != m.KittyFlags() {
				t.Errorf("%s: split at %d differs", tc.name, i)
			}
		}
	}
}

// FuzzModes: the tracker never panics, does not depend on how the output
// is split into reads, keeps its stack bounded, and a mode sequence after
// anything (past a CAN, which ends every sequence and string) is obeyed.
func FuzzModes(f *testing.F) {
	for _, s := range []string{"", "\x1b[?2004h", "\x1b[?2004l", "\x1b]0;x\x07", "\x1bP1$r\x1b\\", "\x1b[>11u\x1b[<u",
		"\x1b[=3;2u", "\x1b[?1049h\x1b[?2004h\x1b[?25l", "\x1b[?20\x18", "\x1bc", "\x1b[?99999999999999h"} {
		f.Add([]byte(s), uint(3))
	}
	f.Fuzz(func(t *testing.T, out []byte, cut uint) {
		var whole termModes
		whole.Write(out)
		i := int(cut % uint(len(out)+1))
		var parts termModes
		parts.Write(out[:i])
		for _, b := range out[i:] { // byte by byte
			parts.Write([]byte{b})
		}
		if whole.Bracketed() != parts.Bracketed() || whole.KittyFlags() != parts.KittyFlags() || whole.state != parts.state {
			t.Fatalf("split at %d changes the modes of %q", i, out)
		}
		if len(whole.kitty) > maxKittyStack || len(whole.params) > maxParams {
			t.Fatalf("unbounded state after %q", out)
		}
		on := whole
		on.kitty = append([]uint32(nil), whole.kitty...)
		on.Write([]byte("\x18\x1b[?2004h"))
		if !on.Bracketed() {
			t.Fatalf("ESC[?2004h after %q not obeyed", out)
		}
		on.Write([]byte("\x1b[?2004l"))
		if on.Bracketed() {
			t.Fatalf("ESC[?2004l after %q not obeyed", out)
		}
		on.Write([]byte("\x1b[>8u"))
		if on.Enter() != "\x1b[13u" {
			t.Fatalf("kitty push after %q not obeyed", out)
		}
	})
}
