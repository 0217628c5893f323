package link

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/socket"
)

// noComposerWait bounds how long a held message waits for a target's
// composer to show.
const noComposerWait = 5 * time.Second

// probeHeld says whether the target of the held message m can take it
// now (ready, with the target as Herdr shows it), else when to look again
// and whether t still has messages (none once its target is gone). The
// probes end with the courier: a server told to stop does not wait for a
// Herdr that does not answer them.
func (l *Link) probeHeld(ctx context.Context, t *courierTarget, m outbox.Message) (a Agent, next time.Duration, keep, ready bool) {
	poll := l.courierPoll()
	pctx, pcancel := l.bound(ctx)
	defer pcancel()
	a, err := l.Herdr.GetAgent(pctx, m.PaneID)
	switch {
	case errors.Is(err, socket.ErrAgentNotFound):
		l.endAll(t, outbox.EndGone) // under the caller's lock: one process ends them
		return a, 0, false, false
	case err != nil:
		l.log().Debug("courier probe failed", "pane_id", m.PaneID, "err", err)
		return a, poll, true, false
	case m.TerminalID != "" && a.TerminalID != m.TerminalID,
		m.Kind != "" && a.Kind != "" && a.Kind != m.Kind,
		a.WorkspaceID != m.WorkspaceID:
		l.endAll(t, outbox.EndGone)
		return a, 0, false, false
	case !Takes(a):
		return a, poll, true, false
	}
	c, err := l.composer(pctx, a)
	if err == nil && c == ComposerDraft {
		t.noComposer = time.Time{}
		return a, min(poll, draftPoll), true, false
	}
	// A kind whose composer herdr-link reads, showing none: a dialog, or
	// a TUI still drawing itself (real Claude Code 2.1.328 reads idle to
	// Herdr 0.8.2 before its composer is back after the trust dialog, and
	// text typed then is lost). It waits for the composer up to
	// noComposerWait, then is typed as before.
	if err == nil && c == ComposerUnknown && ComposerKnown(a.Kind) {
		if t.noComposer.IsZero() {
			t.noComposer = time.Now()
		}
		if time.Since(t.noComposer) < noComposerWait {
			return a, min(poll, draftPoll), true, false
		}
	} else {
		t.noComposer = time.Time{}
	}
	if ctx.Err() != nil {
		return a, poll, true, false
	}
	return a, 0, true, true
}
