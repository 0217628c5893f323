package link_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/herdr-link/herdr-link/link"
)

func writeConfig(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, link.ConfigPath), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStartConfigured: the configuration is found from the working
// directory upward (here one level up), in this project's form and the
// reference's; its errors come before anything is created.
func TestStartConfigured(t *testing.T) {
	const cfg = `{"agents":{
	 "rev":{"kind":"codex","args":["--full-auto"],"placement":"down"},
	 "tabbed":{"placement":{"mode":"new_tab","label":"Review"},"variants":[{"kind":"claude"}]},
	 "rr":{"placement":{"mode":"with"},"strategy":"round-robin","variants":[{"kind":"claude","args":["a"]},{"kind":"codex","args":["b"]}]}}}`
	tests := []struct {
		name, agent, config string
		want                link.Code
		argv                [][]string
	}{
		{"explicit form", "rev", cfg, "", [][]string{{"codex", "--full-auto"}}},
		{"reference form", "tabbed", cfg, "", [][]string{{"claude"}}},
		{"round robin", "rr", cfg, "", [][]string{{"claude", "a"}, {"codex", "b"}, {"claude", "a"}}},
		{"unknown key in an entry", "bad", `{"agents":{"bad":{"kind":"claude","shell":"sh -c"}}}`, link.StartConfigInvalid, nil},
		{"no such agent", "nobody", cfg, link.StartAgentNotFound, nil},
		{"not JSON", "rev", `{"agents":`, link.StartConfigInvalid, nil},
		{"no agents", "rev", `{}`, link.StartConfigInvalid, nil},
		{"unknown root key", "rev", `{"agents":{},"x":1}`, link.StartConfigInvalid, nil},
		{"several variants without a strategy", "v", `{"agents":{"v":{"variants":[{"kind":"claude"},{"kind":"codex"}]}}}`, link.StartConfigInvalid, nil},
		{"bad placement", "v", `{"agents":{"v":{"kind":"claude","placement":"left"}}}`, link.StartConfigInvalid, nil},
		{"bad kind", "v", `{"agents":{"v":{"kind":"sh -c x"}}}`, link.StartConfigInvalid, nil},
		{"control in args", "v", `{"agents":{"v":{"kind":"claude","args":["a\nb"]}}}`, link.StartConfigInvalid, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t)
			l := e.startLink(t, "w1:p1")
			writeConfig(t, filepath.Dir(l.Config().Dir), tt.config) // the home, one above
			l = relink(t, l, func(c *link.Config) { c.Dir = filepath.Join(l.Config().Dir, "sub") })
			for i := range max(1, len(tt.argv)) {
				before := e.w.PaneIDs()
				_, err := l.Start(t.Context(), link.StartRequest{Name: "t" + string(rune('a'+i)), Agent: tt.agent})
				if code(err) != tt.want {
					t.Fatalf("got %v, want %q", err, tt.want)
				}
				if tt.want != "" && !slices.Equal(before, e.w.PaneIDs()) {
					t.Errorf("a pane was created")
				}
			}
			if tt.argv != nil && !slices.EqualFunc(e.w.Started(), tt.argv, slices.Equal) {
				t.Errorf("started %q, want %q", e.w.Started(), tt.argv)
			}
		})
	}
}

// The search stops at the home directory: a configuration above it is
// not used.
func TestStartConfigStopsAtHome(t *testing.T) {
	e := setup(t)
	l := e.startLink(t, "w1:p1")
	writeConfig(t, filepath.Dir(l.Config().Home), `{"agents":{"rev":{"kind":"codex"}}}`)
	_, err := l.Start(t.Context(), link.StartRequest{Name: "tester", Agent: "rev"})
	if code(err) != link.StartConfigNotFound {
		t.Fatalf("got %v", err)
	}
}

func FuzzStartRequest(f *testing.F) {
	f.Add("tester", "claude", "", "a", "right", "", "sub", "hi")
	f.Add("Tester", "", "rev", "\x00", "tab", "reviewer", "/", " ")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, name, kind, agent, arg, place, beside, cwd, msg string) {
		l := mustLink(t, link.Config{Herdr: noStarter{}, Dir: dir, Home: dir})
		_, err := l.Start(t.Context(), link.StartRequest{Name: name, Kind: kind, Agent: agent, Args: []string{arg}, Placement: place, Beside: beside, Cwd: cwd, Message: msg})
		if err == nil {
			t.Fatal("started without a Herdr")
		}
	})
}

// noStarter is a Herdr that cannot start agents.
type noStarter struct{ link.Herdr }

// FuzzAgentConfig: any agent_config.json is a configured start or one of
// the configuration errors, never a panic, never a start without Herdr.
func FuzzAgentConfig(f *testing.F) {
	f.Add(`{"agents":{"rev":{"kind":"codex","args":["a"],"placement":"down"}}}`, "rev")
	f.Add(`{"agents":{"rr":{"strategy":"round-robin","variants":[{"kind":"a"},{"kind":"b","args":null}],"placement":{"mode":"with"}}}}`, "rr")
	f.Add(`{"agents":{"x":{"placement":{"mode":"new_tab","label":1}}}}`, "x")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, cfg, key string) {
		writeConfig(t, dir, cfg)
		l := mustLink(t, link.Config{Herdr: noStarter{}, Dir: dir, Home: dir})
		_, err := l.Start(t.Context(), link.StartRequest{Name: "tester", Agent: key})
		if err == nil {
			t.Fatal("started without a Herdr")
		}
	})
}
