//go:build unix

package tui

import (
	"context"
	"fmt"
	"strings"

	"github.com/herdr-link/herdr-link/socket/sockettest/ptypane"
)

// WaitReady waits until the host's TUI in p has turned bracketed paste on
// and drawn its input box: from then on a paste lands in the composer
// (before it, typed text is the raw case of hosts-and-delivery.md §2).
func WaitReady(ctx context.Context, h Host, p *ptypane.Pane) error {
	sign := ComposerSign(h)
	if err := p.WaitReady(ctx, func(screen string) bool { return strings.Contains(screen, sign) }); err != nil {
		return fmt.Errorf("tui: %s never became ready (bracketed paste %v): %w; screen:\n%s", h, p.BracketedPaste(), err, p.Screen(false, false))
	}
	return nil
}
