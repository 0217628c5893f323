package ptypane

import (
	"bytes"
	"testing"
)

func TestOSCFilter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []string
		want   string
	}{
		{"title with ✳", []string{"\x1b]0;✳ Claude Code\x07ab"}, "\x1b]0; Claude Code\x07ab"},
		{"text untouched", []string{"❯\u00a0draft ✳"}, "❯\u00a0draft ✳"},
		{"ST terminator", []string{"\x1b]2;é\x1b\\é"}, "\x1b]2;\x1b\\é"},
		{"split across reads", []string{"\x1b", "]0;\xe2\x9c", "\xb3 x\x07", "✳"}, "\x1b]0; x\x07✳"},
		{"CSI is not OSC", []string{"\x1b[1mé\x1b[m"}, "\x1b[1mé\x1b[m"},
		{"OSC then ESC sequence", []string{"\x1b]0;a\x1b[2Jé"}, "\x1b]0;a\x1b[2Jé"},
		{"two OSCs", []string{"\x1b]0;é\x07\x1b]0;ü\x07ü"}, "\x1b]0;\x07\x1b]0;\x07ü"},
	} {
		var f oscFilter
		var got bytes.Buffer
		for _, c := range tc.chunks {
			got.Write(f.filter([]byte(c)))
		}
		if got.String() != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got.String(), tc.want)
		}
	}
}
