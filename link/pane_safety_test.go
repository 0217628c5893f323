package link_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/herdr-link/herdr-link/link"
)

// TestNothingRawReachesThePane sends hostile messages and checks
// every byte string the simulated pane received: only the bracketed-paste
// brackets Herdr adds carry ESC, and the pasted text holds no C0 control
// but LF, no DEL, no C1 control, no bidi mark, override or isolate, no
// zero-width or tag character and no
// invalid UTF-8.
func TestNothingRawReachesThePane(t *testing.T) {
	msgs := []string{
		"esc \x1b[31mred\x1b[0m",
		"paste end \x1b[201~ then \x1b[200~",
		"8-bit paste end \u009b201~ and CSI \u009b2J, OSC \u009d0;t\u009c",
		"del \x7f bs \x08 bel \x07 nul \x00 cr \r crlf \r\n lf \n tab \t",
		"bidi \u202a\u202b\u202c\u202d\u202e \u2066\u2067\u2068\u2069",
		"ls \u2028 ps \u2029",
		"marks \u200e\u200f\u061c zero-width \u200b\u200c\u200d\u2060\ufeff tags \U000E0001\U000E0041\U000E007F",
		"invalid \xff\xfe\xc3 utf8 \xed\xa0\x80 surrogate",
		"osc52 \x1b]52;c;ZWNobyBoaQ==\x07 dcs \x1bP+q\x1b\\",
	}
	for _, m := range msgs {
		e := setup(t)
		l := e.link("w1:p1")
		if _, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: m}); err != nil {
			t.Fatalf("send %q: %v", m, err)
		}
		ins := e.w.Inputs("w1:p2")
		if len(ins) == 0 {
			t.Fatalf("send %q: the pane received nothing", m)
		}
		for _, in := range ins {
			body := in
			if strings.HasPrefix(body, "\x1b[200~") && strings.HasSuffix(body, "\x1b[201~") {
				body = body[len("\x1b[200~") : len(body)-len("\x1b[201~")]
			} else if body == "\r" {
				continue // Herdr's Enter
			}
			if !utf8.ValidString(body) {
				t.Errorf("send %q: invalid UTF-8 reached the pane: %q", m, body)
			}
			for _, r := range body {
				bad := r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f ||
					r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x2028 || r == 0x2029 ||
					r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x200b && r <= 0x200d || r == 0x2060 || r == 0xfeff ||
					r >= 0xe0000 && r <= 0xe007f
				if bad {
					t.Errorf("send %q: %U reached the pane raw: %q", m, r, body)
				}
			}
		}
		got, ok := link.Extract(strings.Join(e.w.Prompts("w1:p2"), ""))
		if !ok {
			t.Fatalf("send %q: no envelope in what was typed", m)
		}
		if want := strings.ToValidUTF8(m, "\ufffd"); got.Message != want && !strings.Contains(m, "\xed\xa0\x80") {
			t.Errorf("send %q: extracted %q", m, got.Message)
		}
	}
}
