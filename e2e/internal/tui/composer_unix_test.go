//go:build unix

package tui_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/tui"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
)

// composerStep is one moment of TestComposerRealTUI: what the user (or
// Herdr) does, the screen sign that shows it happened, and what
// link.Composer must make of the screen.
type composerStep struct {
	name string
	act  func(t *testing.T, r *rig)
	// done reports whether the screen shows the step happened.
	done func(screen string) bool
	want link.ComposerState
}

// typeKeys types s a key at a time, as a user does.
func typeKeys(t *testing.T, r *rig, s string) {
	t.Helper()
	for _, k := range s {
		if err := r.pane.Send([]byte(string(k))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// clearComposer empties a composer with Ctrl+U (kill to the start of
// the line) in both: Codex 0.171.0 takes two presses a row of a
// multi-line draft (the row's text, then the line break).
func clearComposer(t *testing.T, r *rig) {
	t.Helper()
	for range 16 {
		if err := r.pane.Send([]byte("\x15")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

const (
	draftText = "please check the logs first"
	pasteText = "line one of the paste\nline two\nline three\nline four\nline five of it"
)

func composerSteps(h tui.Host) []composerStep {
	has := func(s string) func(string) bool { return func(sc string) bool { return strings.Contains(sc, s) } }
	hasNot := func(s string) func(string) bool { return func(sc string) bool { return !strings.Contains(sc, s) } }
	pasteSign := "line five of it"
	if h == tui.Claude {
		pasteSign = "[Pasted text #"
	}
	steps := []composerStep{
		{name: "idle-empty", act: func(*testing.T, *rig) {}, done: func(string) bool { return true }, want: link.ComposerEmpty},
		{name: "idle-draft", act: func(t *testing.T, r *rig) { typeKeys(t, r, draftText) }, done: has("logs first"), want: link.ComposerDraft},
		{name: "idle-cleared", act: clearComposer, done: hasNot("logs first"), want: link.ComposerEmpty},
		{name: "idle-paste", act: func(t *testing.T, r *rig) {
			if err := r.pane.Send([]byte("\x1b[200~" + pasteText + "\x1b[201~")); err != nil {
				t.Fatal(err)
			}
		}, done: has(pasteSign), want: link.ComposerDraft},
		{name: "idle-paste-cleared", act: clearComposer, done: hasNot(pasteSign), want: link.ComposerEmpty},
		{name: "working-empty", act: func(t *testing.T, r *rig) {
			r.tap.SetDelay(busyDelay)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			if _, err := r.srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: "reviewer", Text: "Start a long task."}); err != nil {
				t.Fatal(err)
			}
			if !waitUntil(ctx, 10*time.Second, func() bool {
				ts := r.tap.Turns()
				return len(ts) > 0 && contains(ts[len(ts)-1].New, "Start a long task.") && ts[len(ts)-1].End.IsZero()
			}) {
				t.Fatal("the target never started working")
			}
			time.Sleep(500 * time.Millisecond)
		}, done: func(string) bool { return true }, want: link.ComposerEmpty},
		{name: "working-draft", act: func(t *testing.T, r *rig) { typeKeys(t, r, draftText) }, done: has("logs first"), want: link.ComposerDraft},
		{name: "working-cleared", act: clearComposer, done: hasNot("logs first"), want: link.ComposerEmpty},
	}
	if h == tui.Claude {
		// Seconds after a turn Claude Code sets its title to "✳ Claude
		// Code" (an OSC the simulator's emulator once drew into the
		// composer row): the composer is still empty.
		steps = append(steps, composerStep{name: "idle-settled", act: func(t *testing.T, r *rig) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if !waitUntil(ctx, 30*time.Second, func() bool {
				ts := r.tap.Turns()
				return len(ts) > 0 && !ts[len(ts)-1].End.IsZero()
			}) {
				t.Fatal("the long turn never ended")
			}
			time.Sleep(5 * time.Second)
		},
			done: func(string) bool { return true }, want: link.ComposerEmpty})
	}
	return steps
}

// TestComposerRealTUI: link.Composer reads the composer of each real TUI
// from its pane.read screen: empty when idle, a draft typed as a user
// types it, a bracketed paste, cleared again, and the same while the
// agent works. HERDR_LINK_COMPOSER_CAPTURE=<dir> writes each screen
// there (the golden files of link/testdata/composer come from it).
func TestComposerRealTUI(t *testing.T) {
	for _, h := range []tui.Host{tui.Claude, tui.Codex} {
		t.Run(string(h), func(t *testing.T) {
			r := newRig(t, h)
			ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
			defer cancel()
			for _, st := range composerSteps(h) {
				st.act(t, r)
				var screen string
				ok := waitUntil(ctx, 20*time.Second, func() bool {
					res, err := r.srv.Client().PaneRead(ctx, schema.PaneReadParams{PaneID: reviewerPane, Source: schema.ReadSourceVisible})
					if err != nil {
						t.Fatal(err)
					}
					screen = res.Text
					return st.done(screen) && link.Composer(string(h), screen) == st.want
				})
				if strings.HasPrefix(st.name, "working-") && st.name != "working-cleared" {
					if ts := r.tap.Turns(); len(ts) == 0 || !ts[len(ts)-1].End.IsZero() {
						t.Errorf("%s: the turn had ended when the screen was read", st.name)
					}
				}
				if dir := os.Getenv("HERDR_LINK_COMPOSER_CAPTURE"); dir != "" {
					ansi, err := r.srv.Client().PaneRead(ctx, schema.PaneReadParams{PaneID: reviewerPane, Source: schema.ReadSourceVisible, StripANSI: new(false), Format: new(schema.ReadFormatANSI)})
					if err != nil {
						t.Fatal(err)
					}
					for name, text := range map[string]string{".txt": screen, ".ansi": ansi.Text} {
						if err := os.WriteFile(filepath.Join(dir, string(h)+"-"+st.name+name), []byte(text), 0o644); err != nil {
							t.Fatal(err)
						}
					}
				}
				if !ok {
					t.Errorf("%s: Composer = %v, want %v; screen:\n%s", st.name, link.Composer(string(h), screen), st.want, screen)
				}
			}
		})
	}
}
