package link

import (
	"context"
	"strings"
	"unicode/utf8"
)

// ComposerState is what an agent's screen says about its composer (the
// input box a user types into): whether it holds text that the next
// submission would carry along with a typed message.
type ComposerState int

const (
	// ComposerUnknown: the screen does not show a composer this parser
	// recognises (an agent kind without rules, a dialog, a screen still
	// starting, a TUI version that draws it differently). It says nothing
	// about a draft either way: "cannot tell". A caller should not hold a
	// message for a draft it cannot see (it would wait for a change the
	// screen may never show); it holds only for [ComposerDraft].
	ComposerUnknown ComposerState = iota
	// ComposerEmpty: the composer is drawn and holds no text (a
	// placeholder or a suggestion the TUI draws itself is not text).
	ComposerEmpty
	// ComposerDraft: the composer holds text (typed or pasted) that a
	// typed message would merge with into one turn.
	ComposerDraft
	// ComposerOverlay: a picker, dialog or menu is drawn over the
	// composer (Codex's /model picker, a permission dialog, a menu):
	// typed text would answer it instead of reaching the composer, though
	// Herdr may read the agent idle.
	ComposerOverlay
)

// String is the state's name: "unknown", "empty" or "draft".
func (s ComposerState) String() string {
	switch s {
	case ComposerEmpty:
		return "empty"
	case ComposerDraft:
		return "draft"
	case ComposerOverlay:
		return "overlay"
	}
	return "unknown"
}

// composerRules are [Composer]'s rules per agent kind.
var composerRules = map[string]func(lines []string) ComposerState{
	"claude":   claudeComposer,
	"codex":    codexComposer,
	"opencode": opencodeComposer,
	"pi":       piComposer,
}

// ComposerKnown reports whether [Composer] has rules for kind: for every
// other kind it answers [ComposerUnknown].
func ComposerKnown(kind string) bool {
	_, ok := composerRules[kind]
	return ok
}

// Composer reads an agent's composer from its screen: the visible text of
// Herdr's pane.read (source "visible", ANSI stripped), for the agent
// kind Herdr reports ("claude", "codex", "opencode", "pi"). It looks
// only at the bottom-most composer the kind draws; anything it does not
// recognise, and every other kind, is [ComposerUnknown]. Trailing spaces
// and blank rows, "\r" and non-breaking spaces are ignored.
func Composer(kind, screen string) ComposerState {
	rule, ok := composerRules[kind]
	if !ok || !utf8.ValidString(screen) {
		return ComposerUnknown
	}
	ls := screenLines(screen)
	if overlayOpen(ls) {
		return ComposerOverlay
	}
	return rule(ls)
}

// overlayRows is how many rows from the bottom [overlayOpen] looks at.
const overlayRows = 16

// overlayOpen reports whether the bottom rows of a screen show a picker,
// dialog or menu, as every kind with composer rules draws one: a
// highlighted numbered choice ("› 1. …", "❯ 1. …", "> 1. …") and, at or
// below it, a key hint naming Esc ("esc to go back", "(esc)", "Esc to
// cancel"). A draft that happens to look so holds a message until it
// changes, which is the safe side.
func overlayOpen(ls []string) bool {
	from := max(0, len(ls)-overlayRows)
	choice := -1
	for i := from; i < len(ls); i++ {
		if choice < 0 && highlightedChoice(ls[i]) {
			choice = i
		}
		if choice >= 0 && namesEsc(ls[i]) {
			return true
		}
	}
	return false
}

// highlightedChoice: a row whose first text is a selection marker, a
// number and a dot.
func highlightedChoice(l string) bool {
	t := strings.TrimLeft(l, " ")
	for _, m := range []string{"›", "❯", ">", "▶", "→"} {
		if rest, ok := strings.CutPrefix(t, m); ok {
			rest = strings.TrimLeft(rest, " ")
			n := 0
			for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
				n++
			}
			return n > 0 && n < len(rest) && rest[n] == '.'
		}
	}
	return false
}

// namesEsc: a row that mentions the Esc key as a word.
func namesEsc(l string) bool {
	l = strings.ToLower(l)
	for i := strings.Index(l, "esc"); i >= 0; {
		before := i == 0 || !isWordByte(l[i-1])
		after := i+3 >= len(l) || !isWordByte(l[i+3])
		if before && after {
			return true
		}
		j := strings.Index(l[i+3:], "esc")
		if j < 0 {
			break
		}
		i += 3 + j
	}
	return false
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_'
}

// screenLines splits a screen into rows with trailing blanks removed and
// the blank rows below the last text dropped.
func screenLines(screen string) []string {
	ls := strings.Split(screen, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRight(strings.ReplaceAll(l, "\u00a0", " "), " \t\r")
	}
	for len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// isRule reports whether l is a horizontal rule: at least 8 "─" and
// nothing else.
func isRule(l string) bool {
	n := 0
	for _, r := range l {
		if r != '─' {
			return false
		}
		n++
	}
	return n >= 8
}

// claudeComposer: Claude Code (2.1.328) draws its composer between two
// rules at the bottom, above one or two footer rows ("⏵⏵ auto mode on
// …", "? for shortcuts"): "❯ " and the text, continuation rows indented,
// a paste as "[Pasted text #N +K lines]". Empty is a bare "❯ " (its
// space a no-break space).
func claudeComposer(ls []string) ComposerState {
	// The bottom rule is at most three rows from the end (the footer).
	top, bottom, ok := ruledBox(ls, 4, isRule)
	if !ok {
		return ComposerUnknown
	}
	first := ls[top+1]
	rest, ok := strings.CutPrefix(first, "❯")
	if !ok {
		return ComposerUnknown
	}
	for _, l := range ls[top+2 : bottom] {
		if strings.TrimSpace(l) != "" {
			return ComposerDraft
		}
	}
	switch {
	case rest == "":
		return ComposerEmpty
	case strings.HasPrefix(rest, " "):
		return ComposerDraft
	}
	return ComposerUnknown
}

// codexPlaceholders are what Codex (0.171.0) shows in an empty composer.
var codexPlaceholders = []string{"Ask Codex to do anything"}

// codexComposer: Codex draws its composer as the last row that starts
// with "› " (the transcript's own user rows start so too, higher up),
// continuation rows indented by two spaces, then a blank row and the
// footer. Empty shows the placeholder "› Ask Codex to do anything".
func codexComposer(ls []string) ComposerState {
	at := -1
	for i := len(ls) - 1; i >= 0; i-- {
		if strings.HasPrefix(ls[i], "›") {
			at = i
			break
		}
	}
	if at < 0 {
		return ComposerUnknown
	}
	text, ok := strings.CutPrefix(ls[at], "› ")
	if !ok {
		if ls[at] != "›" {
			return ComposerUnknown
		}
		text = ""
	}
	if at+1 < len(ls) && strings.HasPrefix(ls[at+1], "  ") && strings.TrimSpace(ls[at+1]) != "" {
		return ComposerDraft // a second row of text
	}
	for _, p := range codexPlaceholders {
		if text == p {
			return ComposerEmpty
		}
	}
	if strings.TrimSpace(text) == "" {
		return ComposerUnknown
	}
	return ComposerDraft
}

// opencodePlaceholder begins what OpenCode (1.18.33) shows in an empty
// composer: `Ask anything… "Fix a TODO in the codebase"` (the example
// varies).
const opencodePlaceholder = "Ask anything…"

// opencodeComposer: OpenCode draws its composer as the last box with a
// "┃" left border and a "╹▀▀▀" bottom: a blank row, the text rows (a
// paste collapsed to "[Pasted ~N lines]"), a blank row, the agent and
// model row ("Build · <model>"), then (on the start screen) blank rows
// and a status row. The transcript's user messages are such
// boxes too, higher up and without the "╹" bottom right under them. In a
// session a sidebar may continue a row far to the right: a row's text
// ends at a run of eight spaces.
func opencodeComposer(ls []string) ComposerState {
	// On the start screen the box is in the middle, the status row at
	// the bottom: the last such bottom is the composer's.
	bottom := -1
	for i := len(ls) - 1; i >= 0; i-- {
		if strings.HasPrefix(strings.TrimLeft(ls[i], " "), "╹▀") {
			bottom = i
			break
		}
	}
	// The agent row is right above the bottom; the box's rows above it.
	top := bottom - 1
	for top > 0 && strings.HasPrefix(strings.TrimLeft(ls[top-1], " "), "┃") {
		top--
	}
	if bottom < 0 || top < 0 || bottom-top < 4 {
		return ComposerUnknown
	}
	var text []string
	for _, l := range ls[top : bottom-1] {
		l = strings.TrimPrefix(strings.TrimLeft(l, " "), "┃")
		if i := strings.Index(l, "        "); i >= 0 {
			l = l[:i]
		}
		if l = strings.TrimSpace(l); l != "" {
			text = append(text, l)
		}
	}
	switch {
	case len(text) == 0:
		return ComposerUnknown
	case len(text) == 1 && strings.HasPrefix(text[0], opencodePlaceholder):
		return ComposerEmpty
	}
	return ComposerDraft
}

// piComposer: Pi (0.73.1) draws its editor between two rules at the
// bottom: one blank row between them when empty, text (or "[paste #N M
// chars]") when not.
func piComposer(ls []string) ComposerState {
	top, bottom, ok := ruledBox(ls, 6, isPiRule)
	if !ok {
		return ComposerUnknown
	}
	for _, l := range ls[top+1 : bottom] {
		if strings.TrimSpace(l) != "" {
			return ComposerDraft
		}
	}
	return ComposerEmpty
}

// isPiRule is a rule of "─" at least 4 wide (Pi's editor borders).
func isPiRule(l string) bool {
	n := 0
	for _, r := range l {
		if r != '─' {
			return false
		}
		n++
	}
	return n >= 4
}

// composer reads target's composer from its screen (pane.read of the
// visible screen). A kind without rules is [ComposerUnknown] without a
// call to Herdr.
func (l *Link) composer(ctx context.Context, target Agent) (ComposerState, error) {
	if !ComposerKnown(target.Kind) {
		return ComposerUnknown, nil
	}
	screen, err := l.cfg.Herdr.ReadScreen(ctx, target.PaneID)
	if err != nil {
		return ComposerUnknown, err
	}
	return Composer(target.Kind, screen), nil
}

// ruledBox finds the last two rows of ls that rule says are rules, the
// bottom one among the last depth rows, with at least one row between
// them: the rows of a composer drawn between two rules.
func ruledBox(ls []string, depth int, rule func(string) bool) (top, bottom int, ok bool) {
	bottom = -1
	for i := len(ls) - 1; i >= 0 && i >= len(ls)-depth; i-- {
		if rule(ls[i]) {
			bottom = i
			break
		}
	}
	if bottom < 1 {
		return 0, 0, false
	}
	top = -1
	for i := bottom - 1; i >= 0; i-- {
		if rule(ls[i]) {
			top = i
			break
		}
	}
	if top < 0 || top+1 == bottom {
		return 0, 0, false
	}
	return top, bottom, true
}
