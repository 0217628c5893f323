package link_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/link"
)

// TestComposerGolden: the screens of the real TUIs (pane.read's visible
// text, captured in simulator PTY panes: Claude Code 2.1.328, Codex
// 0.171.0, OpenCode 1.18.33, Pi 0.73.1) and what their composer holds.
func TestComposerGolden(t *testing.T) {
	E, D := link.ComposerEmpty, link.ComposerDraft
	want := map[string]link.ComposerState{
		"claude-idle-empty": E, "claude-idle-draft": D, "claude-idle-cleared": E,
		"claude-idle-paste": D, "claude-idle-paste-cleared": E, "claude-idle-settled": E,
		"claude-working-empty": E, "claude-working-draft": D, "claude-working-cleared": E,
		"codex-idle-empty": E, "codex-idle-draft": D, "codex-idle-cleared": E,
		"codex-idle-paste": D, "codex-idle-paste-cleared": E,
		"codex-working-empty": E, "codex-working-draft": D, "codex-working-cleared": E,
		"opencode-idle-empty": E, "opencode-idle-draft": D, "opencode-idle-cleared": E,
		"opencode-idle-paste": D, "opencode-idle-paste-cleared": E, "opencode-working-draft": D,
		"pi-idle-empty": E, "pi-idle-draft": D, "pi-idle-cleared": E,
		"pi-idle-paste": D, "pi-idle-paste-cleared": E,
		"pi-idle-empty-after-turn": E, "pi-idle-draft-after-turn": D,
	}
	files, err := filepath.Glob(filepath.Join("testdata", "composer", "*.txt"))
	if err != nil || len(files) != len(want) {
		t.Fatalf("%d golden screens (%v), want %d", len(files), err, len(want))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		w, ok := want[name]
		if !ok {
			t.Errorf("%s: no expectation", name)
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		kind, _, _ := strings.Cut(name, "-")
		screen := string(b)
		if got := link.Composer(kind, screen); got != w {
			t.Errorf("%s: %v, want %v", name, got, w)
		}
		// Another kind's rules do not read this screen as theirs, but
		// for an empty one (a composer is a composer).
		for _, other := range []string{"gemini", "", "claude-code"} {
			if got := link.Composer(other, screen); got != link.ComposerUnknown {
				t.Errorf("%s as %q: %v, want unknown", name, other, got)
			}
		}
		// pane.read's trimming does not matter: trailing blanks, CRLF.
		padded := strings.ReplaceAll(screen, "\n", "   \r\n") + "\n\n   \n"
		if got := link.Composer(kind, padded); got != w {
			t.Errorf("%s padded: %v, want %v", name, got, w)
		}
	}
}

// TestComposerRules: the edges of each kind's rules.
func TestComposerRules(t *testing.T) {
	rule := strings.Repeat("─", 40)
	U, E, D, O := link.ComposerUnknown, link.ComposerEmpty, link.ComposerDraft, link.ComposerOverlay
	for _, tc := range []struct {
		name, kind, screen string
		want               link.ComposerState
	}{
		{"nothing", "claude", "", U},
		// Pickers, dialogs and menus over the composer: a highlighted
		// numbered choice with an Esc hint at or below it, every kind.
		{"codex /model picker", "codex", "  Select Model and Effort\n\n› 1. gpt-5.5 (current)\n  2. gpt-5.4\n\n  Press enter to confirm or esc to go back", O},
		{"codex rate-limit prompt", "codex", "  Approaching rate limits\n› 1. Switch to gpt-5.4-mini\n  2. Keep current model\n  Press enter to confirm or esc to go back", O},
		{"claude permission dialog", "claude", " Do you want to proceed?\n ❯ 1. Yes\n   2. No, and tell Claude what to do differently (esc)", O},
		{"claude dialog, Esc to cancel", "claude", " Select model\n ❯ 1. Default\n   2. Opus\n\n Enter to confirm · Esc to cancel", O},
		{"opencode menu", "opencode", "  Select agent\n> 1. build\n  2. plan\n  esc close", O},
		{"pi menu", "pi", "→ 1. Continue\n  2. Stop\n  ↑/↓ move · enter select · esc cancel", O},
		{"codex draft that is a numbered list", "codex", "› 1. fix it\n  2. test it\n\n  gpt-5 default", D},
		{"codex choice, hint above it", "codex", "  esc to go back\n› 1. gpt-5.5", D},
		{"codex word containing esc", "codex", "› 1. describe it\n  escape the quotes", D},
		{"invalid UTF-8", "claude", rule + "\n❯ \xff\n" + rule, U},
		{"unknown kind", "gemini", rule + "\n❯ \n" + rule, U},
		{"claude empty", "claude", rule + "\n❯\u00a0\n" + rule + "\n  ? for shortcuts", E},
		{"claude empty, plain space", "claude", rule + "\n❯ \n" + rule, E},
		{"claude draft", "claude", rule + "\n❯\u00a0hi\n" + rule + "\n  footer", D},
		{"claude multi-line draft, first row blank", "claude", rule + "\n❯\u00a0\n  second\n" + rule, D},
		{"claude paste", "claude", rule + "\n❯ [Pasted text #2 +9 lines]\n" + rule, D},
		{"claude no rules (a dialog)", "claude", "Do you trust the files in this folder?\n❯ 1. Yes", U},
		{"claude one rule", "claude", "❯ hi\n" + rule, U},
		{"claude rules around something else", "claude", rule + "\n Select model\n" + rule, U},
		{"claude box far above the bottom", "claude", rule + "\n❯ \n" + rule + "\na\nb\nc\nd\ne", U},
		{"claude prompt glued", "claude", rule + "\n❯x\n" + rule, U},
		{"claude short rule", "claude", "───\n❯ hi\n───", U},
		{"claude transcript prompt is not the composer", "claude", "❯ old message\n" + rule + "\n❯ \n" + rule, E},
		{"codex empty", "codex", "› Ask Codex to do anything\n\n  gpt-5 default", E},
		{"codex draft", "codex", "› fix it\n\n  gpt-5 default", D},
		{"codex multi-line", "codex", "› Ask Codex to do anything\n  more", D},
		{"codex transcript row above", "codex", "› old message\n\n• done\n\n› Ask Codex to do anything\n\n  footer", E},
		{"codex paste", "codex", "› [Pasted Content 1200 chars]", D},
		{"codex no composer", "codex", "Welcome to Codex\n  Press enter to continue", U},
		{"codex bare prompt", "codex", "›\n\n  footer", U},
		{"codex prompt glued", "codex", "›x", U},
		{"opencode empty", "opencode", "┃\n┃  Ask anything… \"Fix a bug\"\n┃\n┃  Build · m\n╹▀▀▀▀", E},
		{"opencode draft", "opencode", "┃\n┃  hello\n┃\n┃  Build · m\n╹▀▀▀▀", D},
		{"opencode sidebar right of the text", "opencode", "  ┃\n  ┃  Ask anything… \"x\"            LSP\n  ┃\n  ┃  Build · m        /tmp\n  ╹▀▀▀", E},
		{"opencode placeholder and more", "opencode", "┃\n┃  Ask anything… \"x\"\n┃  more\n┃\n┃  Build · m\n╹▀▀▀▀", D},
		{"opencode empty box", "opencode", "┃\n┃\n┃\n┃  Build · m\n╹▀▀▀▀", U},
		{"opencode no bottom", "opencode", "┃\n┃  hello\n┃\n┃  Build · m", U},
		{"opencode box too small", "opencode", "┃  hello\n╹▀▀▀▀", U},
		{"pi empty", "pi", "────\n\n────\n/tmp/w\n0.0%", E},
		{"pi draft", "pi", "────\nhi\n────\n/tmp/w", D},
		{"pi paste", "pi", "────\n[paste #1 2000 chars]\n────", D},
		{"pi rules touching", "pi", "────\n────", U},
		{"pi one rule", "pi", "hi\n────", U},
		{"pi rule too far up", "pi", "────\n\n────\n1\n2\n3\n4\n5\n6", U},
	} {
		if got := link.Composer(tc.kind, tc.screen); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestComposerStateString(t *testing.T) {
	for s, w := range map[link.ComposerState]string{link.ComposerEmpty: "empty", link.ComposerDraft: "draft", link.ComposerUnknown: "unknown", 7: "unknown"} {
		if s.String() != w {
			t.Errorf("%d: %q, want %q", s, s.String(), w)
		}
	}
	for k, w := range map[string]bool{"claude": true, "codex": true, "opencode": true, "pi": true, "gemini": false, "": false} {
		if link.ComposerKnown(k) != w {
			t.Errorf("ComposerKnown(%q) = %v", k, !w)
		}
	}
}

// FuzzComposer: any screen gives one of the three states without
// panicking, an unknown kind is always unknown, and blank rows or
// trailing spaces added below change nothing.
func FuzzComposer(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "composer", "*.txt"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		kind, _, _ := strings.Cut(filepath.Base(file), "-")
		f.Add(kind, string(b))
	}
	f.Add("claude", "────────\n❯ \n────────")
	f.Fuzz(func(t *testing.T, kind, screen string) {
		got := link.Composer(kind, screen)
		if got != link.ComposerUnknown && got != link.ComposerEmpty && got != link.ComposerDraft {
			t.Fatalf("state %d", got)
		}
		if !link.ComposerKnown(kind) && got != link.ComposerUnknown {
			t.Fatalf("kind %q without rules: %v", kind, got)
		}
		if again := link.Composer(kind, screen+"  \n \n"); again != got {
			t.Fatalf("blank rows below: %v, was %v", again, got)
		}
	})
}
