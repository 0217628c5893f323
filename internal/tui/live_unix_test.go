//go:build unix

package tui_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/tui"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/ptypane"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// hostBinary is the installed TUI of h named by HERDR_LINK_CLAUDE_BIN or
// HERDR_LINK_CODEX_BIN; the test skips when it is not set.
func hostBinary(t *testing.T, h tui.Host) string {
	t.Helper()
	env := map[tui.Host]string{tui.Claude: "HERDR_LINK_CLAUDE_BIN", tui.Codex: "HERDR_LINK_CODEX_BIN"}[h]
	bin := os.Getenv(env)
	if bin == "" {
		t.Skipf("%s not set (the path of an installed %s)", env, h)
	}
	return bin
}

// TestTUIRecipes: each interactive TUI, started unattended by its recipe
// in a simulator PTY pane, turns bracketed paste on, and a delivery the
// way Herdr types it becomes a model turn holding exactly the text.
func TestTUIRecipes(t *testing.T) {
	for _, h := range []tui.Host{tui.Claude, tui.Codex} {
		t.Run(string(h), func(t *testing.T) {
			bin := hostBinary(t, h)
			tap, err := tui.NewTap(standIn(t).URL)
			if err != nil {
				t.Fatal(err)
			}
			defer tap.Close()
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
			srv := simtest.New(t, w, ptypane.Option)
			pane := srv.Program("w1:p1").(*ptypane.Pane)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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
				t.Fatalf("no model turn with the text: %v; turns %+v; screen:\n%s", err, tap.Turns(), pane.Screen(false, false))
			}
			if in := srv.World.Inputs("w1:p1"); len(in) != 2 || in[0] != "\x1b[200~"+text+"\x1b[201~" {
				t.Fatalf("writes %q", in)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
