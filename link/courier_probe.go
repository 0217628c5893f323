package link

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/socket"
)

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
		m.Session != "" && sessionOf(a) != m.Session,
		a.WorkspaceID != m.WorkspaceID:
		l.endAll(t, outbox.EndGone)
		return a, 0, false, false
	case !Takes(a):
		return a, poll, true, false
	}
	if c, err := l.composer(pctx, a); err == nil {
		if why, held := holdsTyping(c); held {
			l.log().Debug("held message waits", "id", m.ID, "pane_id", m.PaneID, "why", why)
			return a, min(poll, draftPoll), true, false
		}
	}
	if ctx.Err() != nil {
		return a, poll, true, false
	}
	// One reading is not trusted: the same state a settle gap later.
	first := a
	a, ok := l.settled(ctx, first)
	if !ok {
		return first, min(poll, l.settleGap()), true, false
	}
	return a, 0, true, true
}
