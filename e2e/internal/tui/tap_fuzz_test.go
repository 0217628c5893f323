package tui

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// FuzzTapParse: reading a model request never panics, user texts keep no
// whole system reminder, cleaning is idempotent, and splitting an answer
// into SSE events loses and adds nothing.
func FuzzTapParse(f *testing.F) {
	for _, s := range []string{
		`{"tools":[{}],"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>\nhi"}]}]}`,
		`{"tools":[{}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>e</environment_context>"}]},{"role":"user","content":"plain"}]}`,
		`{"input":"just text"}`, `{"messages":[{"role":"user","content":"s"}]}`, `[]`, `{"messages":7}`,
		"event: a\ndata: 1\n\nevent: b\ndata: 2\n\n", "data: x\r\n\r\ntrailing",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, users := parseRequest(b)
		for _, u := range users {
			if i := strings.Index(u, "<system-reminder>"); i >= 0 && strings.Contains(u[i:], "</system-reminder>") {
				t.Fatalf("a reminder survived in %q", u)
			}
			if again, ok := userText(u); !ok || again != u {
				t.Fatalf("cleaning %q again gives %q, %v", u, again, ok)
			}
		}
		rd := bufio.NewReader(bytes.NewReader(b))
		var out []byte
		for {
			ev, err := readEvent(rd)
			out = append(out, ev...)
			if err != nil {
				break
			}
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("events of %q rejoin as %q", b, out)
		}
	})
}
