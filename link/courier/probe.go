package courier

import (
	"context"
	"errors"
	"github.com/herdr-link/herdr-link/link/deliver"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/socket"
)

// observation is one probe of a target: what Herdr showed (or the error
// it gave) and when the probe was sent.
type observation struct {
	at  time.Time
	a   deliver.Agent
	err error
}

// observe probes the agent of pane once.
func (c *Courier) observe(ctx context.Context, pane string) observation {
	pctx, cancel := c.bound(ctx)
	defer cancel()
	o := observation{at: time.Now()}
	o.a, o.err = c.cfg.Herdr.GetAgent(pctx, pane)
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

// noComposerWait bounds how long a held message waits for a target's
// composer to show.
const noComposerWait = 5 * time.Second

// probeHeld says whether the target of the held message m can take it
// now (ready, with the target as Herdr shows it), else when to look again
// and whether t still has messages (none once its target is gone), with
// what the probe saw. The probes end with the courier: a server told to
// stop does not wait for a Herdr that does not answer them.
func (c *Courier) probeHeld(ctx context.Context, t *courierTarget, m outbox.Message) (o observation, next time.Duration, keep, ready bool) {
	poll := c.courierPoll()
	o = c.observe(ctx, m.PaneID)
	switch {
	case o.gone(m.TerminalID, m.Kind, m.WorkspaceID),
		o.err == nil && m.Session != "" && deliver.SessionOf(o.a) != m.Session: // another agent session
		c.endAll(t, outbox.EndGone) // under the caller's lock: one process ends them
		return o, 0, false, false
	case o.err != nil:
		c.log().Debug("courier probe failed", "pane_id", m.PaneID, "err", o.err)
		return o, poll, true, false
	case !deliver.Takes(o.a):
		return o, poll, true, false
	}
	pctx, pcancel := c.bound(ctx)
	defer pcancel()
	why, none := c.cfg.Ports.Composer(pctx, o.a)
	if why != "" {
		t.noComposer = time.Time{}
		c.log().Debug("held message waits", "id", m.ID, "pane_id", m.PaneID, "why", why)
		return o, min(poll, draftPoll), true, false
	}
	// A kind whose composer herdr-link reads, showing none: a dialog, or
	// a TUI still drawing itself (real Claude Code 2.1.328 reads idle to
	// Herdr 0.8.2 before its composer is back after the trust dialog, and
	// text typed then is lost). It waits for the composer up to
	// noComposerWait, then is typed as before.
	if none {
		if t.noComposer.IsZero() {
			t.noComposer = time.Now()
		}
		if time.Since(t.noComposer) < noComposerWait {
			return o, min(poll, draftPoll), true, false
		}
	} else {
		t.noComposer = time.Time{}
	}
	if ctx.Err() != nil {
		return o, poll, true, false
	}
	// One reading is not trusted: the same state a settle gap later.
	a, ok := c.d.Settled(ctx, o.a)
	if !ok {
		return o, min(poll, c.d.SettleGap()), true, false
	}
	o.a = a
	return o, 0, true, true
}
