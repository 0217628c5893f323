package tui_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/e2e/internal/tui"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s changed:\n%s\nwant:\n%s", name, got, want)
	}
}

// TestConfigs: the files that get the TUIs past their dialogs are a
// contract with the pinned host versions (golden).
func TestConfigs(t *testing.T) {
	o := tui.Options{Work: `/work/dir "quoted"`, BaseURL: "http://127.0.0.1:4242/", APIKey: "sk-ant-0123456789abcdefghijklmnopqrstuvwxyz"}
	golden(t, "codex-config.toml", tui.CodexConfig(o))
	b, err := tui.ClaudeConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	var pretty map[string]any
	if err := json.Unmarshal(b, &pretty); err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(pretty, "", "  ")
	golden(t, "claude.json", string(out)+"\n")
}

func TestPrepare(t *testing.T) {
	if _, err := tui.Prepare(tui.Claude, tui.Options{}); err == nil {
		t.Fatal("empty options accepted")
	}
	if _, err := tui.Prepare("vim", tui.Options{Binary: "/bin/true", Dir: t.TempDir(), BaseURL: "http://x"}); err == nil {
		t.Fatal("unknown host accepted")
	}
	for _, h := range []tui.Host{tui.Claude, tui.Codex} {
		dir := t.TempDir()
		r, err := tui.Prepare(h, tui.Options{Binary: "/opt/" + string(h), Dir: dir, BaseURL: "http://127.0.0.1:1"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Command.Argv[0] != "/opt/"+string(h) || !strings.HasSuffix(r.Command.Dir, "work") {
			t.Errorf("%s: command %q in %s, want /opt/%s in …/work", h, r.Command.Argv, r.Command.Dir, h)
		}
		file := filepath.Join(r.Home, ".claude.json")
		if h == tui.Codex {
			file = filepath.Join(r.CodexHome, "config.toml")
			if !slices.Contains(r.Command.Env, "CODEX_HOME="+r.CodexHome) {
				t.Errorf("codex env %q", r.Command.Env)
			}
		} else if !slices.Contains(r.Command.Env, "ANTHROPIC_BASE_URL=http://127.0.0.1:1") {
			t.Errorf("claude env %q", r.Command.Env)
		}
		data, err := os.ReadFile(file)
		if err != nil || !strings.Contains(string(data), r.Command.Dir) {
			t.Errorf("%s: %s does not trust %s: %s %v", h, file, r.Command.Dir, data, err)
		}
		if !slices.Contains(r.Command.Env, "HOME="+r.Home) {
			t.Errorf("%s: HOME not isolated: %q", h, r.Command.Env)
		}
		// Nothing to stop: no daemon ran.
		if pids, err := r.Cleanup(); len(pids) != 0 || err != nil {
			t.Errorf("%s: cleanup %v %v", h, pids, err)
		}
	}
}
