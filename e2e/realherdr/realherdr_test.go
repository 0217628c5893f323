//go:build unix

package realherdr

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/realherdr"
	"github.com/herdr-link/herdr-link/schema"
)

// TestRealHerdr runs herdr-link's process tests against a real Herdr
// 0.8.2 whose panes run the real Claude Code (alice) and Codex (bob)
// TUIs: Herdr's own detection decides every state herdr-link sees. The
// steps share the one server and run in order; each leaves both TUIs
// idle.
func TestRealHerdr(t *testing.T) {
	l := startLane(t)
	alice := l.connect(t, l.claude, "alice")
	bob := l.connect(t, l.codex, "bob")
	steps := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"peers", func(t *testing.T) { l.peers(t, alice) }},
		{"simulator", l.simulator},
		{"delivery/idle", func(t *testing.T) { l.deliverIdle(t, alice, bob) }},
		{"delivery/working", func(t *testing.T) { l.deliverWorking(t, alice) }},
		{"delivery/draft", func(t *testing.T) { l.deliverDraft(t, bob) }},
		{"delivery/draft-codex", func(t *testing.T) { l.deliverDraftCodex(t, alice) }},
		{"delivery/blocked", func(t *testing.T) { l.deliverBlocked(t, alice) }},
		{"detection/codex-exit", l.codexExit},
		{"requests", func(t *testing.T) { l.requests(t, alice, bob) }},
		{"start", func(t *testing.T) { l.startPlacements(t, alice) }},
		{"delivery/two-senders", func(t *testing.T) { l.twoSenders(t, alice) }},
		{"close", func(t *testing.T) { l.close(t, alice) }},
		{"bench", l.bench},
	}
	only := os.Getenv("HERDR_LINK_LANE_STEPS") // comma-separated step names (while working on one)
	for _, s := range steps {
		if only != "" && !slices.Contains(strings.Split(only, ","), s.name) {
			continue
		}
		begin := time.Now()
		ok := t.Run(s.name, s.run)
		t.Logf("%s: %v", s.name, time.Since(begin).Round(time.Millisecond))
		if !ok {
			return // later steps assume the earlier ones' state
		}
	}
	t.Logf("lane total %v", time.Since(l.startedAt).Round(time.Millisecond))
}

// peers: Herdr's detection names both TUIs idle, and each sees the other.
func (l *lane) peers(t *testing.T, alice session) {
	_, isErr, sc := alice.call(t, "herdr_link_peers", nil)
	if got, want := fmt.Sprint(sc["peers"]), "[map[name:bob state:idle]]"; isErr || got != want {
		t.Fatalf("peers: got %s, want %s", got, want)
	}
	text, isErr, _ := alice.call(t, "herdr_link_send", map[string]any{"to": "nobody", "message": "hi"})
	if !isErr || !strings.HasPrefix(text, "PEER_NOT_FOUND: ") {
		t.Fatalf("send to nobody: %q", text)
	}
}

// idle waits until Herdr reports the agent named name idle.
func (l *lane) idle(t *testing.T, name string) schema.AgentInfo {
	t.Helper()
	pane, ok := l.agentPane(t, name)
	if !ok {
		t.Fatalf("no agent %s in Herdr", name)
	}
	return l.wait(t, pane, schema.AgentStatusIdle)
}

func (l *lane) wait(t *testing.T, pane string, s schema.AgentStatus) schema.AgentInfo {
	t.Helper()
	ctx, cancel := contextWithTimeout(t, deliverBound)
	defer cancel()
	a, err := l.h.WaitAgent(ctx, pane, realherdr.Status(s))
	if err != nil {
		t.Fatalf("%v; screen:\n%s", err, l.h.Screen(t.Context(), pane))
	}
	return a
}

// agentPane is the pane of the agent named name.
func (l *lane) agentPane(t *testing.T, name string) (string, bool) {
	t.Helper()
	as, err := l.h.Client.AgentList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.Name != nil && *a.Name == name {
			return a.PaneID, true
		}
	}
	return "", false
}

func (l *lane) paneCount(t *testing.T) int {
	t.Helper()
	ps, err := l.h.Client.PaneList(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	return len(ps)
}

func (l *lane) waitScreenCtx(t *testing.T, pane, text string) error {
	ctx, cancel := contextWithTimeout(t, 10*time.Second)
	defer cancel()
	if err := l.waitScreen(ctx, pane, func(s string) bool { return strings.Contains(s, text) }); err != nil {
		return fmt.Errorf("%q never showed: %v; screen:\n%s", text, err, l.h.Screen(t.Context(), pane))
	}
	return nil
}

// traceStates logs every state Herdr reports for the agent named name
// until the returned function is called (what detection showed during a
// start, for the docs' table and failures).
func (l *lane) traceStates(t *testing.T, name string) func() {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		last := ""
		begin := time.Now()
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			as, err := l.h.Client.AgentList(t.Context())
			if err != nil {
				continue
			}
			for _, a := range as {
				if a.Name == nil || *a.Name != name {
					continue
				}
				s := fmt.Sprintf("%s kind=%q pending=%v ready=%v", a.AgentStatus, deref(a.Agent), a.LaunchPending, a.InteractiveReady)
				if s != last {
					last = s
					t.Logf("%s +%v: %s", name, time.Since(begin).Round(time.Millisecond), s)
					if a.AgentStatus == schema.AgentStatusBlocked {
						t.Logf("screen:\n%s", l.h.Screen(t.Context(), a.PaneID))
					}
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// logStates logs the states Herdr reports for pane over d (polled every
// 50 ms), labelled what.
func (l *lane) logStates(t *testing.T, pane, what string, d time.Duration) {
	var seen []string
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if a, ok, _ := l.h.Agent(t.Context(), pane); ok && (len(seen) == 0 || seen[len(seen)-1] != string(a.AgentStatus)) {
			seen = append(seen, string(a.AgentStatus))
		}
	}
	t.Logf("detection: %s: %s", what, strings.Join(seen, " → "))
}
