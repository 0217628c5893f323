package courier

import (
	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link/deliver"
)

// Hold stores the message env (text, sent by self to target, held for
// why) in the outbox for the courier ([Courier.Deliver]) of this process,
// or of any other serving the same Herdr once this one is gone.
func (c *Courier) Hold(self, target deliver.Agent, env Sent, text, why string) error {
	if c.cfg.Outbox == nil {
		c.log().Info("target busy and no outbox to hold the message in", "pane_id", target.PaneID, "why", why)
		return c.cfg.Ports.Fail(NoOutbox, nil)
	}
	now := c.now()
	m := outbox.Message{
		ID: env.ID, Expires: now.Add(c.holdFor()),
		To: env.To, From: env.From, TargetKey: deliver.LockKey(target), FromKey: deliver.LockKey(self),
		PaneID: target.PaneID, TerminalID: target.TerminalID, Kind: target.Kind, WorkspaceID: target.WorkspaceID,
		Session: deliver.SessionOf(target), Reason: why, FromPane: self.PaneID, FromKind: self.Kind, FromWorkspace: self.WorkspaceID, Text: text,
	}
	if _, err := c.cfg.Outbox.Add(m, now); err != nil {
		return c.cfg.Ports.OutboxFailed(err)
	}
	c.log().Debug("held", "id", env.ID, "to", env.To, "pane_id", target.PaneID, "why", why, "bytes", len(text))
	c.kickFor(c.cfg.Outbox.KeyHash(m.TargetKey))
	return nil
}

// Owed is what the sender self has outstanding, per target key hash:
// messages held, and requests awaiting a reply (ids, oldest first). For
// Peers: one look at the sender's own entries.
func (c *Courier) Owed(self deliver.Agent) (held map[string]int, awaiting map[string][]string) {
	if c.cfg.Outbox == nil {
		return nil, nil
	}
	held, awaiting, err := c.cfg.Outbox.CountsForSender(c.cfg.Outbox.KeyHash(deliver.LockKey(self)))
	if err != nil {
		return nil, nil
	}
	return held, awaiting
}
