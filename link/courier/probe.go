package courier

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/link/deliver"
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
