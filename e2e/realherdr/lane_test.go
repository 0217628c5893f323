//go:build unix

package realherdr

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/bins"
	"github.com/herdr-link/herdr-link/e2e/internal/fakemodel"
	"github.com/herdr-link/herdr-link/e2e/internal/hosttest"
	"github.com/herdr-link/herdr-link/e2e/internal/realherdr"
	"github.com/herdr-link/herdr-link/e2e/internal/tui"
	"github.com/herdr-link/herdr-link/schema"
)

// binary is herdr-link built from the tree (package bins).
var binary string

func TestMain(m *testing.M) {
	dir, err := bins.Dir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "herdr-link")
	os.Exit(m.Run())
}

// lane is one real Herdr with a workspace whose panes run the real
// Claude Code and Codex TUIs against a fake model, behind a tap that can
// hold a turn open (a working agent) for as long as a test needs.
type lane struct {
	h         *realherdr.Herdr
	taps      map[tui.Host]*tui.Tap
	ws        string
	claude    string // pane of the Claude Code TUI, named "alice"
	codex     string // pane of the Codex TUI, named "bob"
	runs      []*tui.Run
	bins      map[tui.Host]string
	tuiEnv    []string
	work      string
	startedAt time.Time
}

// turnPace paces the fake model's answers (per streamed event), so that a
// turn lasts about a second, as a real model's does at the least: Herdr's
// screen detection does not see a turn of the instant fake (Codex's
// state_change_seq did not move for one), and then neither can
// herdr-link.
const turnPace = 150 * time.Millisecond

// tuiBinary is h's TUI: $HERDR_LINK_CLAUDE_BIN / $HERDR_LINK_CODEX_BIN,
// else the pinned version in the host runner's cache $HERDR_LINK_HOSTS
// (installed there when missing). Without either the lane skips.
func tuiBinary(t *testing.T, h tui.Host) string {
	t.Helper()
	env := map[tui.Host]string{tui.Claude: "HERDR_LINK_CLAUDE_BIN", tui.Codex: "HERDR_LINK_CODEX_BIN"}[h]
	if bin := os.Getenv(env); bin != "" {
		return bin
	}
	cache := os.Getenv("HERDR_LINK_HOSTS")
	if cache == "" {
		// (CI runs the lane in a step of its own, after the host runner
		// filled its cache.)
		t.Skipf("skipped: real TUIs needed: set HERDR_LINK_HOSTS=<install cache> (see scripts/hosts.sh) or %s", env)
	}
	host := hosttest.Lookup(string(h))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	if err := host.Install(ctx, cache); err != nil {
		t.Fatal(err)
	}
	return host.BinPath(cache)
}

// startLane starts real Herdr, a workspace "app", and the two TUIs in it
// by Herdr's own agent.start (kind claude named alice, kind codex named
// bob), and waits until Herdr detects both idle.
func startLane(t *testing.T) *lane {
	t.Helper()
	realherdr.Need(t)
	l := &lane{bins: map[tui.Host]string{tui.Claude: tuiBinary(t, tui.Claude), tui.Codex: tuiBinary(t, tui.Codex)},
		taps: map[tui.Host]*tui.Tap{}, startedAt: time.Now()}
	fake, err := fakemodel.Start(fakemodel.Options{Script: fakemodel.Script{FinalText: "Received, thanks."}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	path := os.Getenv("PATH")
	for _, h := range []tui.Host{tui.Claude, tui.Codex} {
		tap, err := tui.NewTap(fake.URL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tap.Close)
		tap.SetDelay(turnPace)
		l.taps[h] = tap
		run, err := tui.Prepare(h, tui.Options{Binary: l.bins[h], Dir: dir, BaseURL: tap.URL})
		if err != nil {
			t.Fatal(err)
		}
		l.runs = append(l.runs, run)
		for _, kv := range run.Command.Env {
			if !slices.Contains(l.tuiEnv, kv) {
				l.tuiEnv = append(l.tuiEnv, kv)
			}
		}
		l.work = run.Command.Dir
		path = filepath.Dir(l.bins[h]) + string(os.PathListSeparator) + path
	}
	t.Cleanup(func() {
		for _, r := range l.runs {
			if pids, err := r.Cleanup(); len(pids) > 0 || err != nil {
				t.Logf("stopped %v (%v)", pids, err)
			}
		}
	})
	l.tuiEnv = append(l.tuiEnv, "PATH="+path)
	// Every pane (those herdr-link's start splits included) inherits the
	// server's environment: the TUIs' configuration goes there.
	l.h = realherdr.StartIn(t, l.work, l.tuiEnv...)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	if l.ws, l.claude, err = l.h.Workspace(ctx, "app", l.work, nil); err != nil {
		t.Fatal(err)
	}
	if l.codex, err = l.h.Split(ctx, l.claude, l.work, nil); err != nil {
		t.Fatal(err)
	}
	l.start(t, ctx, tui.Claude, "alice", l.claude)
	l.start(t, ctx, tui.Codex, "bob", l.codex)
	// A TUI's first turn is slow to show (Codex took 6.7 s from the
	// prompt to "working" in Herdr): one warm-up turn each, so that the
	// steps see the TUIs' steady state.
	for h, pane := range map[tui.Host]string{tui.Claude: l.claude, tui.Codex: l.codex} {
		if _, err := l.h.Client.AgentPrompt(ctx, schema.AgentPromptParams{Target: pane, Text: "warm up"}); err != nil {
			t.Fatal(err)
		}
		if err := l.taps[h].Wait(ctx, func(ts []tui.Turn) bool { return len(ts) > 0 && !ts[len(ts)-1].End.IsZero() }); err != nil {
			t.Fatalf("%s: no warm-up turn: %v; screen:\n%s", h, err, l.h.Screen(t.Context(), pane))
		}
	}
	for _, pane := range []string{l.claude, l.codex} {
		if _, err := l.h.WaitAgent(ctx, pane, realherdr.Status(schema.AgentStatusIdle)); err != nil {
			t.Fatalf("after the warm-up: %v; screen:\n%s", err, l.h.Screen(t.Context(), pane))
		}
	}
	t.Logf("real Herdr with Claude Code (alice) and Codex (bob) idle after %v", time.Since(l.startedAt).Round(time.Millisecond))
	return l
}

// start runs Herdr's agent.start of kind in pane and waits for the agent
// to be idle and its composer drawn.
func (l *lane) start(t *testing.T, ctx context.Context, h tui.Host, name, pane string) {
	t.Helper()
	if _, err := l.h.Client.AgentStart(ctx, schema.AgentStartParams{Kind: string(h), Name: name, PaneID: pane}); err != nil {
		t.Fatalf("agent.start %s: %v; screen:\n%s", h, err, l.h.Screen(t.Context(), pane))
	}
	if _, err := l.h.WaitAgent(ctx, pane, realherdr.Status(schema.AgentStatusIdle)); err != nil {
		a, _, _ := l.h.Agent(t.Context(), pane)
		t.Logf("agent in %s: name %s, status %s, launch pending %v, ready %v", pane, deref(a.Name), a.AgentStatus, a.LaunchPending, a.InteractiveReady)
		t.Fatalf("%s: %v; screen:\n%s", h, err, l.h.Screen(t.Context(), pane))
	}
	if err := l.waitScreen(ctx, pane, func(s string) bool { return strings.Contains(s, tui.ComposerSign(h)) }); err != nil {
		t.Fatalf("%s: no composer: %v; screen:\n%s", h, err, l.h.Screen(t.Context(), pane))
	}
}

// waitScreen polls the pane's visible text until ok accepts it.
func (l *lane) waitScreen(ctx context.Context, pane string, ok func(string) bool) error {
	for {
		if ok(l.h.Screen(ctx, pane)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func contextWithTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), d)
}
