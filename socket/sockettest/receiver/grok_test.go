package receiver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest/receiver"
)

// TestGrokRawInput: the grok kind never turns bracketed paste on; a write
// that starts with a control character is dropped whole (a leading line
// break lost a herdr-link delivery), one with line breaks inside is
// submitted as typed; Enter while working starts another turn at once
// beside the running one; Herdr's Enter 300 ms after 64 KiB of raw text
// comes while Grok is still reading it and is lost.
func TestGrokRawInput(t *testing.T) {
	wrapped := "[herdr-link/1] Message\n{\"protocol\":\"herdr-link/1\"}\n"
	big := strings.Repeat("x", 64<<10)
	for _, tc := range []struct {
		name    string
		draft   string
		working bool
		writes  []string
		want    []string // the turns, oldest first
		cut     bool     // the running turn's answer dropped
	}{
		{"wrapper", "", false, []string{wrapped, "\r"}, []string{wrapped}, false},
		{"leading line break dropped", "", false, []string{"\n" + wrapped, "\r"}, nil, false},
		{"leading CR dropped", "", false, []string{"\r\n" + wrapped, "\r"}, nil, false},
		{"leading tab dropped", "", false, []string{"\tx", "\r"}, nil, false},
		{"escape sequence is not text", "", false, []string{"\x1b[I", "hi", "\r"}, []string{"hi"}, false},
		{"keys one at a time", "", false, []string{"h", "i", "\r"}, []string{"hi"}, false},
		{"draft glued", "half typed draft", false, []string{wrapped, "\r"}, []string{"half typed draft" + wrapped}, false},
		{"a paste arrives as text", "", false, []string{"\x1b[200~hi\x1b[201~", "\r"}, []string{"hi"}, false},
		{"working: at once, beside", "", true, []string{wrapped, "\r"}, []string{"busy", wrapped}, false},
		{"64 KiB: Enter lost", "", false, []string{big, "\r"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTerminal{state: schema.AgentStatusIdle, now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
			ft.m = receiver.NewModel(ft, "grok", receiver.Behaviour{TurnTime: 2 * time.Second}, tc.draft)
			if ft.m.BracketedPaste() {
				t.Fatal("grok has bracketed paste on")
			}
			if tc.working {
				ft.m.Input("busy")
				ft.advance(300 * time.Millisecond)
				ft.m.Input("\r")
				ft.advance(time.Second)
				if ft.state != schema.AgentStatusWorking || len(ft.subs) != 1 {
					t.Fatalf("after a submit: %s with %d turns, want working with 1", ft.state, len(ft.subs))
				}
			}
			for i, w := range tc.writes {
				if i > 0 {
					ft.advance(300 * time.Millisecond) // Herdr's Enter comes 300 ms after the text
				}
				ft.m.Input(w)
			}
			at := ft.now
			ft.advance(5 * time.Second)
			var got []string
			for _, s := range ft.subs {
				got = append(got, s.Text)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("turns %q, want %q", short(got), short(tc.want))
			}
			if tc.working && !ft.subs[1].At.Before(at.Add(time.Second)) {
				t.Fatalf("the message waited for the running turn: at %v", ft.subs[1].At.Sub(at))
			}
		})
	}
}

func short(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		if len(s) > 60 {
			s = s[:60] + "…"
		}
		out[i] = s
	}
	return out
}
