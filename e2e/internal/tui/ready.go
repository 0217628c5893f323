package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Terminal is the side of a pane's terminal WaitReady watches (a
// *ptypane.Pane).
type Terminal interface {
	WaitReady(ctx context.Context, match func(screen string) bool) error
	WaitScreen(ctx context.Context, match func(screen string) bool) error
	BracketedPaste() bool
	Screen(recent, ansi bool) string
	Send(b []byte) error
}

// WaitReady waits until the host's TUI in p has turned bracketed paste on
// and drawn its input box: from then on a paste lands in the composer
// (before it, typed text is the raw case of hosts-and-delivery.md §2).
// A host that never turns bracketed paste on ([RawInput]) is ready once
// its input box is drawn and a key typed into it shows there (see
// [probeInput]).
func WaitReady(ctx context.Context, h Host, p Terminal) error {
	sign := ComposerSign(h)
	wait := p.WaitReady
	if RawInput(h) {
		wait = p.WaitScreen
	}
	has := func(screen string) bool { return strings.Contains(screen, sign) }
	if err := wait(ctx, has); err != nil {
		return fmt.Errorf("tui: %s never became ready (bracketed paste %v): %w; screen:\n%s", h, p.BracketedPaste(), err, p.Screen(false, false))
	}
	if RawInput(h) {
		if err := probeInput(ctx, p, has); err != nil {
			return fmt.Errorf("tui: %s draws its input box but takes no keys: %w; screen:\n%s", h, err, p.Screen(false, false))
		}
	}
	return nil
}

// Grok CLI 0.0.34 draws its input box before it reads keys: text typed
// in its first moments is lost whole (seen: a prompt typed as soon as
// "Ask me anything" showed never reached the composer, 1 start in 5).
const (
	probeKey  = "q"
	probeSeen = "❯ " + probeKey
	probeWait = 2 * time.Second
	keyGap    = 30 * time.Millisecond
)

// probeInput types one key until the composer shows it, then erases
// what it typed and waits for the empty composer (has) again.
func probeInput(ctx context.Context, p Terminal, has func(string) bool) error {
	for n := 1; ctx.Err() == nil; n++ {
		if err := p.Send([]byte(probeKey)); err != nil {
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, probeWait)
		err := p.WaitScreen(pctx, func(s string) bool { return strings.Contains(s, probeSeen) })
		cancel()
		if err == nil {
			// A key that seemed lost may land late: one Backspace each,
			// a write apart (Ink reads "\x7f\x7f" in one chunk as text).
			for range n {
				if err := p.Send([]byte("\x7f")); err != nil {
					return err
				}
				time.Sleep(keyGap)
			}
			return p.WaitScreen(ctx, has)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
	return ctx.Err()
}
