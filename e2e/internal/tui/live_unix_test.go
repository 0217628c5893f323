//go:build unix

package tui_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/fakemodel"
	"github.com/herdr-link/herdr-link/e2e/internal/hosttest"
	"github.com/herdr-link/herdr-link/e2e/internal/tui"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/ptypane"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// hostBinary is the interactive TUI of h: the binary named by
// HERDR_LINK_CLAUDE_BIN or HERDR_LINK_CODEX_BIN, else the pinned version
// from the host runner's install cache HERDR_LINK_HOSTS (installed there
// when missing, as scripts/hosts.sh does). Without either the test skips.
func hostBinary(t *testing.T, h tui.Host) string {
	t.Helper()
	env := map[tui.Host]string{tui.Claude: "HERDR_LINK_CLAUDE_BIN", tui.Codex: "HERDR_LINK_CODEX_BIN"}[h]
	if bin := os.Getenv(env); bin != "" {
		return bin
	}
	cache := os.Getenv("HERDR_LINK_HOSTS")
	if cache == "" {
		t.Skipf("real TUIs: set HERDR_LINK_HOSTS=<install cache> (see scripts/hosts.sh) or %s", env)
	}
	host := hosttest.Lookup(string(h))
	if host == nil {
		t.Fatalf("the host runner does not know %s", h)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	if err := host.Install(ctx, cache); err != nil {
		t.Fatal(err)
	}
	return host.BinPath(cache)
}

// fakeModel is the host runner's fake model server answering every turn
// with a short text, and the tap in front of it the TUI talks to.
func fakeModel(t *testing.T) (*fakemodel.Server, *tui.Tap) {
	t.Helper()
	fake, err := fakemodel.Start(fakemodel.Options{Script: fakemodel.Script{FinalText: "Received, thanks."}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	tap, err := tui.NewTap(fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tap.Close)
	return fake, tap
}

// TestTUIRecipes: each interactive TUI, started unattended by its recipe
// in a simulator PTY pane, turns bracketed paste on (but Grok CLI), and a delivery the
// way Herdr types it becomes a model turn holding exactly the text.
func TestTUIRecipes(t *testing.T) {
	for _, h := range tui.Hosts {
		t.Run(string(h), func(t *testing.T) {
			bin := hostBinary(t, h)
			_, tap := fakeModel(t)
			run, err := tui.Prepare(h, tui.Options{Binary: bin, Dir: t.TempDir(), BaseURL: tap.URL})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				pids, err := run.Cleanup()
				t.Logf("stopped %v (%v)", pids, err)
			})
			w, err := sockettest.NewWorld(sockettest.WorldSpec{Workspaces: []sockettest.WorkspaceSpec{{ID: "w1", Tabs: []sockettest.TabSpec{{ID: "w1:t1", Panes: []sockettest.PaneSpec{
				{ID: "w1:p1", Agent: &sockettest.AgentSpec{Kind: string(h), Name: "reviewer", Status: "idle"}, Command: ptr(sockettest.CommandSpec(run.Command))}}}}}}})
			if err != nil {
				t.Fatal(err)
			}
			srv := simtest.New(t, w, sockettest.WithPrograms(ptypane.Start))
			pane := srv.Program("w1:p1").(*ptypane.Pane)
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			if err := tui.WaitReady(ctx, h, pane); err != nil {
				t.Fatal(err)
			}
			const text = "hello from the simulator\nsecond line"
			if _, err := srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: "reviewer", Text: text}); err != nil {
				t.Fatal(err)
			}
			if err := tap.Wait(ctx, func(ts []tui.Turn) bool {
				return slices.ContainsFunc(ts, func(x tui.Turn) bool { return slices.Contains(x.New, text) })
			}); err != nil {
				t.Fatalf("no model turn with the text: %v, want one; turns:%s\nscreen:\n%s", err, turnLines(tap.Turns()), pane.Screen(false, false))
			}
			// (Herdr reports focus-in to a copilot pane first.)
			in := srv.World.Inputs("w1:p1")
			if h == tui.Copilot && len(in) > 0 && in[0] == "\x1b[I" {
				in = in[1:]
			}
			// (A TUI that never turns bracketed paste on is typed into raw.)
			typed := "\x1b[200~" + text + "\x1b[201~"
			if tui.RawInput(h) {
				typed = text
			}
			if len(in) != 2 || in[0] != typed {
				t.Fatalf("writes %q", in)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
