package link

import (
	"context"
	"errors"
	"testing"
)

// screenHerdr answers ReadScreen with a screen or an error and counts
// the calls; every other method is absent.
type screenHerdr struct {
	Herdr
	screen string
	err    error
	reads  int
}

func (h *screenHerdr) ReadScreen(context.Context, string) (string, error) {
	h.reads++
	return h.screen, h.err
}

// TestLinkComposer: the helper reads the target's screen for a kind with
// rules, and does not call Herdr for one without.
func TestLinkComposer(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name, kind, screen string
		err                error
		want               ComposerState
		reads              int
	}{
		{"codex draft", "codex", "› hello", nil, ComposerDraft, 1},
		{"codex empty", "codex", "› Ask Codex to do anything", nil, ComposerEmpty, 1},
		{"no rules, no read", "gemini", "› hello", nil, ComposerUnknown, 0},
		{"no kind, no read", "", "", nil, ComposerUnknown, 0},
		{"read fails", "claude", "", boom, ComposerUnknown, 1},
	} {
		h := &screenHerdr{screen: tc.screen, err: tc.err}
		l := mustLink(t, Config{Herdr: h})
		got, err := l.composer(t.Context(), Agent{Kind: tc.kind, PaneID: "w1:p2"})
		if got != tc.want || !errors.Is(err, tc.err) || h.reads != tc.reads {
			t.Errorf("%s: %v, %v, %d reads; want %v, %v, %d", tc.name, got, err, h.reads, tc.want, tc.err, tc.reads)
		}
	}
}
