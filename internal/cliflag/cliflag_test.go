package cliflag

import (
	"bytes"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name           string
		args           []string
		code           int
		done           bool
		stdout, stderr string // substrings; "" means the stream must be empty
	}{
		{name: "flags", args: []string{"-n", "3"}, code: 0, done: false},
		{name: "short help", args: []string{"-h"}, code: 0, done: true, stdout: "usage: tool run [flags]"},
		{name: "long help", args: []string{"--help"}, code: 0, done: true, stdout: "-n int"},
		{name: "unknown flag", args: []string{"-bogus"}, code: 2, done: true, stderr: "flag provided but not defined: -bogus"},
		{name: "bad value", args: []string{"-n", "x"}, code: 2, done: true, stderr: "usage: tool run [flags]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			fs := New("tool run [flags]", "Runs the tool.", &errOut)
			n := fs.Int("n", 1, "how many")
			code, done := Parse(fs, tt.args, &out)
			if code != tt.code || done != tt.done {
				t.Fatalf("Parse = %d, %v; want %d, %v", code, done, tt.code, tt.done)
			}
			check := func(stream, got, want string) {
				t.Helper()
				if want == "" && got != "" {
					t.Errorf("%s = %q, want empty", stream, got)
				}
				if !strings.Contains(got, want) {
					t.Errorf("%s = %q, want it to contain %q", stream, got, want)
				}
			}
			check("stdout", out.String(), tt.stdout)
			check("stderr", errOut.String(), tt.stderr)
			if tt.name == "flags" && *n != 3 {
				t.Errorf("n = %d", *n)
			}
			if tt.stdout != "" && !strings.Contains(out.String(), "Runs the tool.") {
				t.Errorf("usage lacks the description: %q", out.String())
			}
		})
	}
}

func TestIsHelpIsVersion(t *testing.T) {
	for _, a := range []string{"-h", "-help", "--help"} {
		if !IsHelp(a) || IsVersion(a) {
			t.Errorf("%q", a)
		}
	}
	for _, a := range []string{"-version", "--version"} {
		if !IsVersion(a) || IsHelp(a) {
			t.Errorf("%q", a)
		}
	}
	if IsHelp("help") || IsVersion("version") || IsHelp("-x") {
		t.Error("subcommand words and other flags are not flags of help/version")
	}
}

func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		args         []string
		wantOperands []string
		wantBin      string
	}{
		{[]string{"claude", "-bin", "/x"}, []string{"claude"}, "/x"},
		{[]string{"-bin", "/x", "claude"}, []string{"claude"}, "/x"},
		{[]string{"claude", "codex"}, []string{"claude", "codex"}, ""},
		{[]string{"claude", "--", "-bin", "/x"}, []string{"claude", "-bin", "/x"}, ""},
		{nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			fs := New("test [flags] HOST", "", &stderr)
			bin := fs.String("bin", "", "")
			got, code, done := ParseInterspersed(fs, tt.args, &stderr)
			if done {
				t.Fatalf("done with code %d: %s", code, stderr.String())
			}
			if strings.Join(got, "|") != strings.Join(tt.wantOperands, "|") || *bin != tt.wantBin {
				t.Errorf("operands %q, -bin %q; want %q, %q", got, *bin, tt.wantOperands, tt.wantBin)
			}
		})
	}
}
