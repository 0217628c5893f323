package herdrlink

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	pi "github.com/herdr-link/herdr-link/adapters/pi"
)

var updateConfig = flag.Bool("update-config", false, "rewrite testdata/config/*.golden")

const goldenBin = "/opt/herdr link/bin/herdr-link" // a space, to show the quoting

// TestConfigGolden: each host's snippet, byte for byte.
func TestConfigGolden(t *testing.T) {
	for _, h := range hosts {
		t.Run(h.Name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Run([]string{"config", "-bin", goldenBin, h.Name}, nil, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			if errOut.Len() > 0 {
				t.Errorf("stderr %q", errOut.String())
			}
			if h.Name == "pi" {
				// The extension itself is the golden: the binary line is
				// the only difference.
				if strings.Count(pi.Source, pi.BinLine) != 1 {
					t.Fatalf("adapters/pi/herdr-link.ts must contain %q exactly once", pi.BinLine)
				}
				want := strings.Replace(pi.Source, pi.BinLine, `const HERDR_LINK_BIN = "/opt/herdr link/bin/herdr-link";`, 1)
				if out.String() != want {
					t.Fatalf("config pi differs from the adapter with the path filled in")
				}
				return
			}
			if strings.HasPrefix(out.String(), "{") && !json.Valid(out.Bytes()) {
				t.Fatalf("not valid JSON:\n%s", out.String())
			}
			file := filepath.Join("testdata", "config", h.Name+".golden")
			if *updateConfig {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != string(want) {
				t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		err  string
	}{
		{[]string{"config"}, "name one host"},
		{[]string{"config", "vim"}, `unknown host "vim"`},
		{[]string{"config", "-bin", "rel/herdr-link", "claude"}, "not an absolute path"},
		{[]string{"config", "claude", "codex"}, "name one host"},
		{[]string{"config", "claude", "-bin", "rel/herdr-link"}, "not an absolute path"},
	} {
		var out, errOut bytes.Buffer
		if code := Run(tt.args, nil, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), tt.err) || out.Len() > 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tt.args, code, out.String(), errOut.String())
		}
	}
	var out bytes.Buffer
	if code := Run([]string{"config", "-h"}, nil, &out, &out); code != 0 {
		t.Fatal("config -h")
	}
	for _, h := range hosts {
		if !strings.Contains(out.String(), "  "+h.Name+" ") {
			t.Errorf("config -h does not list %s:\n%s", h.Name, out.String())
		}
	}
}

// The binary (this test binary as herdr-link), run through a symlink,
// writes its real absolute path.
func TestConfigUsesResolvedExecutable(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "hl")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, "config", "claude")
	cmd.Env = append(os.Environ(), beMain+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(self)
	if err != nil {
		t.Fatal(err)
	}
	if want := "claude mcp add --scope user herdr_link -- " + real + "\n"; string(out) != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

// pointerOnly are the hosts whose snippet docs/hosts.md may leave to
// 'herdr-link config HOST' (a snippet it does show is still checked).
var pointerOnly = map[string]bool{"gemini": true, "qwen": true, "copilot": true, "grok": true, "crush": true}

// docs/hosts.md's host sections show exactly what 'herdr-link config' prints
// for a binary at readmeBin: each <!-- herdr-link config X --> marker is
// followed by a fenced block holding that text.
func TestREADMEHostSnippets(t *testing.T) {
	const readmeBin = "/absolute/path/to/bin/herdr-link"
	doc, err := os.ReadFile("../../../docs/hosts.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)<!-- herdr-link config ([a-z-]+) -->\n```[a-z]*\n(.*?)```").FindAllSubmatch(doc, -1)
	want := map[string]string{"pi-install": piInstall(readmeBin)}
	for _, h := range hosts {
		if h.Name != "pi" { // the extension is a file; docs/hosts.md shows its install command
			want[h.Name] = h.Snippet(readmeBin)
		}
	}
	seen := map[string]bool{}
	for _, b := range blocks {
		name, text := string(b[1]), string(b[2])
		w, ok := want[name]
		if !ok {
			t.Errorf("docs/hosts.md has a snippet for unknown host %q", name)
			continue
		}
		seen[name] = true
		if text != w {
			t.Errorf("README's %s snippet drifted from 'herdr-link config':\n--- docs/hosts.md\n%s--- config\n%s", name, text, w)
		}
	}
	for name := range want {
		if !seen[name] && !pointerOnly[name] {
			t.Errorf("docs/hosts.md lacks the %s snippet", name)
		}
	}
}

// selfPath prefers the PATH entry that is this binary (a package
// manager's stable symlink) over the resolved, versioned file.
func TestSelfPathPrefersStableSymlink(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "herdr-link")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	got, err := selfPath(func(string) (string, error) { return link, nil })
	if err != nil || got != link {
		t.Errorf("selfPath = %q, %v; want the symlink %q", got, err, link)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err = selfPath(func(string) (string, error) { return other, nil })
	if want, _ := filepath.Abs(exe); err != nil || got != want {
		t.Errorf("selfPath with another herdr-link on PATH = %q, %v; want %q", got, err, want)
	}
}
