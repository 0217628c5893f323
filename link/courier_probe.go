package link

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/socket"
)

// observation is one probe of a target: what Herdr showed (or the error
// it gave) and when the probe was sent.
type observation struct {
	at  time.Time
	a   Agent
	err error
}

// observe probes the agent of pane once.
func (l *Link) observe(ctx context.Context, pane string) observation {
	pctx, cancel := l.bound(ctx)
	defer cancel()
	o := observation{at: time.Now()}
	o.a, o.err = l.Herdr.GetAgent(pctx, pane)
	return o
}

// gone reports whether o shows that the recipient resolved as pane,
// terminal, kind and workspace is gone: its pane closed, another
// occupant in it, or it moved to another workspace.
func (o observation) gone(terminal, kind, workspace string) bool {
	switch {
	case errors.Is(o.err, socket.ErrAgentNotFound):
		return true
	case o.err != nil:
		return false
	}
	return terminal != "" && o.a.TerminalID != terminal ||
		kind != "" && o.a.Kind != "" && o.a.Kind != kind ||
		o.a.WorkspaceID != workspace
}

// probeHeld says whether the target of the held message m can take it
// now (ready, with the target as Herdr shows it), else when to look again
// and whether t still has messages (none once its target is gone), with
// what the probe saw. The probes end with the courier: a server told to
// stop does not wait for a Herdr that does not answer them.
func (l *Link) probeHeld(ctx context.Context, t *courierTarget, m outbox.Message) (o observation, next time.Duration, keep, ready bool) {
	poll := l.courierPoll()
	o = l.observe(ctx, m.PaneID)
	switch {
	case o.gone(m.TerminalID, m.Kind, m.WorkspaceID):
		l.endAll(t, outbox.EndGone) // under the caller's lock: one process ends them
		return o, 0, false, false
	case o.err != nil:
		l.log().Debug("courier probe failed", "pane_id", m.PaneID, "err", o.err)
		return o, poll, true, false
	case !Takes(o.a):
		return o, poll, true, false
	}
	pctx, pcancel := l.bound(ctx)
	defer pcancel()
	if c, err := l.composer(pctx, o.a); err == nil && c == ComposerDraft {
		return o, min(poll, draftPoll), true, false
	}
	if ctx.Err() != nil {
		return o, poll, true, false
	}
	return o, 0, true, true
}
