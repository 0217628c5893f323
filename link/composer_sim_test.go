package link_test

import (
	"fmt"
	"testing"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// TestComposerSimulator: the simulator's receiving end draws each kind's
// composer as the real TUI does, so Composer reads the simulator's
// pane.read (through SocketHerdr.ReadScreen) as it reads the real one:
// empty without a draft, a draft with one, idle or working.
func TestComposerSimulator(t *testing.T) {
	drafts := []string{"", "half typed", "line one\nline two"}
	var panes string
	type pane struct {
		id, kind, status, draft string
	}
	var all []pane
	for _, kind := range []string{"claude", "codex", "opencode", "pi", "gemini"} {
		for _, status := range []string{"idle", "working"} {
			for _, d := range drafts {
				p := pane{fmt.Sprintf("w1:p%d", len(all)+1), kind, status, d}
				all = append(all, p)
				if panes != "" {
					panes += ","
				}
				panes += fmt.Sprintf(`{"id":%q,"agent":{"kind":%q,"status":%q,"draft":%q}}`, p.id, p.kind, p.status, p.draft)
			}
		}
	}
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[` + panes + `]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h := link.SocketHerdr{Client: simtest.New(t, w).Client()}
	for _, p := range all {
		screen, err := h.ReadScreen(t.Context(), p.id)
		if err != nil {
			t.Fatal(err)
		}
		want := link.ComposerEmpty
		switch {
		case p.kind == "gemini":
			want = link.ComposerUnknown
		case p.draft != "":
			want = link.ComposerDraft
		}
		if got := link.Composer(p.kind, screen); got != want {
			t.Errorf("%s %s draft %q: %v, want %v; screen:\n%s", p.kind, p.status, p.draft, got, want, screen)
		}
	}
	if _, err := h.ReadScreen(t.Context(), "w9:p9"); err == nil {
		t.Error("ReadScreen of a pane that does not exist: no error")
	}
}
