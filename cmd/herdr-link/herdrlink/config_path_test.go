package herdrlink

import (
	"bytes"
	"strings"
	"testing"
)

// config refuses a binary path no host configuration can carry as
// written: a control character (DEL included: TOML forbids it raw in a
// string) or bytes that are not UTF-8 (JSON and TOML would turn them into
// U+FFFD, another path). Nothing goes to stdout.
func TestConfigRefusesUnwritablePath(t *testing.T) {
	tests := []struct {
		name, bin, want string
	}{
		{"DEL", "/opt/a\x7fb/herdr-link", "control character"},
		{"escape", "/opt/a\x1bb/herdr-link", "control character"},
		{"newline", "/opt/a\nb/herdr-link", "control character"},
		{"C1 control", "/opt/a\u0085b/herdr-link", "control character"},
		{"not UTF-8", "/opt/a\xffb/herdr-link", "not valid UTF-8"},
	}
	for _, tt := range tests {
		for _, h := range hosts {
			t.Run(tt.name+"/"+h.Name, func(t *testing.T) {
				var out, errb bytes.Buffer
				code := config([]string{"-bin", tt.bin, h.Name}, &out, &errb)
				if code != 2 || out.Len() != 0 || !strings.Contains(errb.String(), tt.want) {
					t.Fatalf("exit %d, stdout %.80q, stderr %q; want 2, nothing, %q", code, out.String(), errb.String(), tt.want)
				}
			})
		}
	}
	// A path with spaces, quotes and non-ASCII letters is fine.
	var out, errb bytes.Buffer
	if code := config([]string{"-bin", `/opt/herdr "link"/bín/herdr-link`, "codex"}, &out, &errb); code != 0 || !strings.Contains(out.String(), `"/opt/herdr \"link\"/bín/herdr-link"`) {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
}
