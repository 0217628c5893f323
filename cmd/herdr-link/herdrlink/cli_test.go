package herdrlink

import (
	"bytes"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/buildinfo"
)

// TestCLIConventions: help and version follow Go's conventions: text on
// stdout, exit 0; misuse on stderr, exit 2.
func TestCLIConventions(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout []string // substrings of stdout; none means stdout is empty
		stderr string   // substring of stderr; "" means stderr is empty
	}{
		{args: []string{"--help"}, stdout: []string{"commands:", "probe", "-timeout duration"}},
		{args: []string{"-h"}, stdout: []string{"commands:", "-log-level"}},
		{args: []string{"help"}, stdout: []string{"commands:"}},
		{args: []string{"help", "probe"}, stdout: []string{"usage: herdr-link probe", "-watch", "-mcp"}},
		{args: []string{"help", "serve"}, stdout: []string{"usage: herdr-link [serve]", "-no-bootstrap"}},
		{args: []string{"help", "version"}, stdout: []string{"usage: herdr-link version"}},
		{args: []string{"probe", "-h"}, stdout: []string{"usage: herdr-link probe"}},
		{args: []string{"serve", "--help"}, stdout: []string{"usage: herdr-link [serve]"}},
		{args: []string{"--version"}, stdout: []string{"herdr-link " + buildinfo.Version()}},
		{args: []string{"version"}, stdout: []string{"herdr-link " + buildinfo.Version()}},
		{args: []string{"help", "bogus"}, code: 2, stderr: `unknown command "bogus"`},
		{args: []string{"bogus"}, code: 2, stderr: `unknown command "bogus"`},
		{args: []string{"-bogus"}, code: 2, stderr: "flag provided but not defined: -bogus"},
		{args: []string{"serve", "extra"}, code: 2, stderr: "unexpected arguments"},
		{args: []string{"demo"}, code: 2, stderr: "run 'herdr-sim demo'"},
		{args: []string{"bench", "-n", "1"}, code: 2, stderr: "run 'herdr-bench'"},
		{args: []string{"bench-relay"}, code: 2, stderr: "run 'herdr-bench relay'"},
		{args: []string{"probe", "-mcp"}, code: 2, stderr: "herdr-bench mcp"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Run(tt.args, strings.NewReader(""), &out, &errOut)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tt.code, errOut.String())
			}
			for _, s := range tt.stdout {
				if !strings.Contains(out.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, out.String())
				}
			}
			if len(tt.stdout) == 0 && out.Len() > 0 {
				t.Errorf("stdout = %q, want empty", out.String())
			}
			if tt.stderr == "" && errOut.Len() > 0 {
				t.Errorf("stderr = %q, want empty", errOut.String())
			}
			if !strings.Contains(errOut.String(), tt.stderr) {
				t.Errorf("stderr lacks %q: %q", tt.stderr, errOut.String())
			}
		})
	}
}

func TestFlagsFirst(t *testing.T) {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	fs.Bool("raw", false, "")
	fs.Bool("mcp", false, "")
	fs.String("call", "", "")
	tests := []struct{ in, want []string }{
		{[]string{"--call", "ping", "{}", "--raw"}, []string{"--call", "ping", "--raw", "{}"}},
		{[]string{"--mcp", "npx", "-y", "pkg", "--raw"}, []string{"--mcp", "npx", "-y", "pkg", "--raw"}},
		{[]string{"--raw", "--mcp", "--", "node", "-e", "x"}, []string{"--raw", "--mcp", "node", "-e", "x"}},
		{[]string{"a", "--", "-b"}, []string{"a", "-b"}},
	}
	for _, tt := range tests {
		if got := flagsFirst(fs, tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("flagsFirst(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The top-level help names every host that config knows, from the same table.
func TestHelpNamesEveryHost(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run([]string{"--help"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("--help: exit %d, stderr %q", code, errOut.String())
	}
	text := strings.Join(strings.Fields(out.String()), " ")
	for _, h := range hosts {
		if !strings.Contains(text, " "+h.Name+",") && !strings.Contains(text, " "+h.Name+")") && !strings.Contains(text, "("+h.Name+",") {
			t.Errorf("--help does not name host %q; got:\n%s", h.Name, out.String())
		}
	}
}

// The README's set-up list names every host that config knows.
func TestReadmeNamesEveryHost(t *testing.T) {
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, h := range hosts {
		if !strings.Contains(readme, "herdr-link config "+h.Name) && !strings.Contains(readme, "`"+h.Name+"`") {
			t.Errorf("README.md does not name host %q (as `herdr-link config %s`)", h.Name, h.Name)
		}
	}
}
