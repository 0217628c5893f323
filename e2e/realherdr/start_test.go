//go:build unix

package realherdr

import (
	"fmt"
	"strings"
	"testing"
)

// startPlacements: herdr-link's start runs Herdr's agent.start of a real
// TUI in each placement, and a start whose program cannot run is rolled
// back (its pane closed).
func (l *lane) startPlacements(t *testing.T, alice session) {
	for _, c := range []struct{ name, kind, placement string }{
		{"carol", "claude", "right"},
		{"dave", "codex", "down"},
		{"erin", "claude", "tab"},
	} {
		stop := l.traceStates(t, c.name)
		text, isErr, sc := alice.call(t, "herdr_link_start", map[string]any{"name": c.name, "kind": c.kind, "placement": c.placement})
		stop()
		if isErr || sc["status"] != "started" || sc["agent"] != c.name {
			t.Fatalf("start %s %s %s: %s", c.name, c.kind, c.placement, text)
		}
		a := l.idle(t, c.name)
		if c.placement == "tab" {
			if base, _, _ := l.h.Agent(t.Context(), l.claude); a.TabID == base.TabID {
				t.Fatalf("start in a tab: %s is in alice's tab %s", c.name, a.TabID)
			}
		} else if base, _, _ := l.h.Agent(t.Context(), l.claude); a.TabID != base.TabID {
			t.Fatalf("start %s: %s is in tab %s, alice in %s", c.placement, c.name, a.TabID, base.TabID)
		}
	}
	panes := l.paneCount(t)
	text, isErr, _ := alice.call(t, "herdr_link_start", map[string]any{"name": "frank", "kind": "opencode", "placement": "right"})
	if !isErr {
		t.Fatalf("start of an opencode that is not installed: %s", text)
	}
	if got := l.paneCount(t); got != panes {
		t.Fatalf("after the failed start: got %d panes, want %d (rolled back); %s", got, panes, text)
	}
	t.Logf("failed start: %s", text)
	for _, name := range []string{"dave", "erin"} {
		if text, isErr, _ := alice.call(t, "herdr_link_close", map[string]any{"agent": name}); isErr {
			t.Fatalf("close %s: %s", name, text)
		}
	}
}

// close: herdr-link's close ends a real TUI's pane; the agent is gone
// from Herdr and from peers.
func (l *lane) close(t *testing.T, alice session) {
	if text, isErr, _ := alice.call(t, "herdr_link_close", map[string]any{"agent": "carol"}); isErr || !strings.Contains(text, `"closed"`) {
		t.Fatalf("close carol: %s", text)
	}
	if _, ok := l.agentPane(t, "carol"); ok {
		t.Fatal("carol is still in Herdr's agent list")
	}
	_, _, sc := alice.call(t, "herdr_link_peers", nil)
	if strings.Contains(fmt.Sprint(sc["peers"]), "carol") {
		t.Fatalf("peers after close: %v", sc["peers"])
	}
}
