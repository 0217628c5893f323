package tui

import (
	"context"
	"fmt"
	"strings"
)

// Terminal is the side of a pane's terminal WaitReady watches (a
// *ptypane.Pane).
type Terminal interface {
	WaitReady(ctx context.Context, match func(screen string) bool) error
	WaitScreen(ctx context.Context, match func(screen string) bool) error
	BracketedPaste() bool
	Screen(recent, ansi bool) string
}

// WaitReady waits until the host's TUI in p has turned bracketed paste on
// and drawn its input box: from then on a paste lands in the composer
// (before it, typed text is the raw case of hosts-and-delivery.md §2).
// A host that never turns bracketed paste on ([RawInput]) is ready once
// its input box is drawn.
func WaitReady(ctx context.Context, h Host, p Terminal) error {
	sign := ComposerSign(h)
	wait := p.WaitReady
	if RawInput(h) {
		wait = p.WaitScreen
	}
	if err := wait(ctx, func(screen string) bool { return strings.Contains(screen, sign) }); err != nil {
		return fmt.Errorf("tui: %s never became ready (bracketed paste %v): %w; screen:\n%s", h, p.BracketedPaste(), err, p.Screen(false, false))
	}
	return nil
}
