package receiver

import (
	"github.com/google/go-cmp/cmp"
	"strings"
	"testing"
)

// normalize merges adjacent typed events, which split writes may cut.
func normalize(evs []inputEvent) []inputEvent {
	var out []inputEvent
	for _, e := range evs {
		if n := len(out); n > 0 && e.kind == inputTyped && out[n-1].kind == inputTyped {
			out[n-1].text += e.text
			continue
		}
		out = append(out, e)
	}
	return out
}

func sameEvents(a, b []inputEvent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestInputParser(t *testing.T) {
	tests := []struct {
		in   []string // successive writes
		want []inputEvent
	}{
		{[]string{"hello"}, []inputEvent{{inputTyped, "hello"}}},
		{[]string{"a\nb\rc"}, []inputEvent{{inputTyped, "a\nb"}, {kind: inputEnter}, {inputTyped, "c"}}},
		{[]string{"\x1b[200~x\ry\x1b[201~", "\r"}, []inputEvent{{inputPaste, "x\ry"}, {kind: inputEnter}}},
		{[]string{"\x1b[20", "0~ab", "c\x1b[2", "01~d"}, []inputEvent{{inputPaste, "abc"}, {inputTyped, "d"}}},
		{[]string{"\x1b[I\x1b[200~p\x1b[201~"}, []inputEvent{{inputPaste, "p"}}},                             // focus-in report consumed
		{[]string{"a\x1b[Ab\x1bxc"}, []inputEvent{{inputTyped, "abc"}}},                                      // cursor key, Alt-x
		{[]string{"\x1b[200~in \x1b[200~ paste\x1b[201~"}, []inputEvent{{inputPaste, "in \x1b[200~ paste"}}}, // literal inside
		{[]string{"\x1b[200~early\x1b[201~late\x1b[201~"}, []inputEvent{{inputPaste, "early"}, {inputTyped, "late"}}},
		{[]string{"\x1b[200~open"}, nil}, // unfinished paste: nothing yet
		{[]string{"\x1b[200~"}, nil},
		{[]string{"\x1b[200~\x1b[201~"}, []inputEvent{{inputPaste, ""}}},
		{[]string{"ab\x15c\x03\x7f\x08"}, []inputEvent{{inputTyped, "ab"}, {inputKey, "ctrl+u"}, {inputTyped, "c"}, {inputKey, "ctrl+c"}, {inputKey, "backspace"}, {inputKey, "backspace"}}},
		{[]string{"\x1b[200~a\x15b\x1b[201~"}, []inputEvent{{inputPaste, "a\x15b"}}}, // literal inside a paste
	}
	for _, tt := range tests {
		var p inputParser
		var got []inputEvent
		for _, w := range tt.in {
			got = append(got, p.feed(w)...)
		}
		if !sameEvents(normalize(got), tt.want) {
			t.Errorf("events for %q mismatch (-want +got):\n%s", tt.in, cmp.Diff(tt.want, normalize(got), cmp.AllowUnexported(inputEvent{})))
		}
	}
}

// FuzzInputParser: splitting the input anywhere gives the same events, and
// text without ESC is typed verbatim with each "\r" an Enter and each
// editing control byte a key.
func FuzzInputParser(f *testing.F) {
	for _, s := range []string{"hello\r", "\x1b[200~a\nb\x1b[201~\r", "\x1b[I\x1b[200~x\x1b[201~", "\x1b[20", "a\x1b", "\x1b[" + strings.Repeat("1", 40) + "m"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, data string, cut int) {
		var whole inputParser
		a := normalize(whole.feed(data))
		if cut < 0 {
			cut = -cut
		}
		if len(data) > 0 {
			cut %= len(data) + 1
		} else {
			cut = 0
		}
		var split inputParser
		b := normalize(append(split.feed(data[:cut]), split.feed(data[cut:])...))
		if !sameEvents(a, b) {
			t.Fatalf("split at %d: events mismatch (-whole +split):\n%s", cut, cmp.Diff(a, b, cmp.AllowUnexported(inputEvent{})))
		}
		if whole.inPaste != split.inPaste || string(whole.esc) != string(split.esc) {
			t.Fatalf("state differs after split at %d", cut)
		}
		if !strings.Contains(data, "\x1b") {
			var typed, keys strings.Builder
			enters := 0
			for _, e := range a {
				switch e.kind {
				case inputTyped:
					typed.WriteString(e.text)
				case inputEnter:
					enters++
				case inputKey:
					keys.WriteString(e.text + ",")
				default:
					t.Fatalf("plain text %q gave an event of kind %v, want typed, Enter or a key", data, e.kind)
				}
			}
			var wantTyped, wantKeys strings.Builder
			for i := 0; i < len(data); i++ {
				switch k := editKey(data[i]); {
				case k != "":
					wantKeys.WriteString(k + ",")
				case data[i] != '\r':
					wantTyped.WriteByte(data[i])
				}
			}
			if typed.String() != wantTyped.String() || keys.String() != wantKeys.String() || enters != strings.Count(data, "\r") {
				t.Fatalf("plain text %q became typed %q, keys %q, %d Enters; want %q, %q, %d",
					data, typed.String(), keys.String(), enters, wantTyped.String(), wantKeys.String(), strings.Count(data, "\r"))
			}
		}
	})
}
