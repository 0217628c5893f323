package courier

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link/deliver"
	"github.com/herdr-link/herdr-link/link/proto"
)

// heldFor returns the messages held or being typed for the target of key
// hash h, oldest first (the store's index: not a listing of the whole
// store).
func (c *Courier) heldFor(h string) ([]outbox.Entry, error) {
	return c.cfg.Outbox.ListForTarget(h)
}

// deliverNext types the oldest held message for t if t can take it now.
// It returns when to look again, whether t still has messages, and what
// its probe of t saw when it probed and typed nothing (nil otherwise: an
// observation made before a delivery says nothing of the turn it
// starts).
func (c *Courier) deliverNext(ctx context.Context, t *waitTarget) (time.Duration, bool, *observation) {
	poll := c.poll()
	var lease deliver.Lease = deliver.NoLease{}
	if c.cfg.Locker != nil {
		lctx, cancel := context.WithTimeout(ctx, lockWait)
		le, err := c.cfg.Locker.Lock(lctx, t.key, c.cfg.CallTimeout)
		cancel()
		if err != nil {
			// Another delivery is under way (or no lock can be had: the
			// log of the send said why); look again at its end.
			return poll, true, nil
		}
		lease = le
	}
	m, ok := c.oldestHeld(t)
	if !ok {
		lease.Unlock()
		return 0, false, nil
	}
	obs, next, keep, ready := c.probeHeld(ctx, t, m)
	if !ready {
		lease.Unlock()
		return next, keep, &obs
	}
	a := obs.a
	batch := c.claim(t, m)
	if len(batch) == 0 {
		lease.Unlock()
		return poll, true, nil
	}
	c.crash("claimed")
	// A delivery once begun is not cut short by the courier's end: the
	// operation deadline and the watch's budget bound it.
	ctx = context.WithoutCancel(ctx)
	hctx, cancel := c.bound(ctx)
	defer cancel()
	if err := lease.Begin(deliver.UntilDeadline(hctx)); err != nil {
		// Broken while this process was stopped: another delivery's turn.
		// The claim stays on disk, as a typer that died would leave it:
		// the message is never typed twice.
		lease.Unlock()
		for _, m := range batch {
			_ = c.cfg.Outbox.End(m, outbox.EndMaybeDelivered, c.now())
		}
		return poll, true, nil
	}
	a.Name = m.To
	var text strings.Builder
	for _, m := range batch {
		text.WriteString(m.Text)
	}
	// The lock is released only once the outcome is on disk: a courier
	// that took it between the release and the record would find the
	// claim and end the message as may-have-been-delivered.
	sl := &deliver.SettleFirst{Lease: lease}
	d, err := c.typeHeld(ctx, hctx, a, m.ID, text.String(), sl)
	for _, m := range batch {
		c.settle(m, d, err)
	}
	sl.Settled()
	return poll, true, nil
}

// noComposerWait bounds how long a held message waits for a target's
// composer to show.
const noComposerWait = 5 * time.Second

// probeHeld says whether the target of the held message m can take it
// now (ready, with the target as Herdr shows it), else when to look again
// and whether t still has messages (none once its target is gone), with
// what the probe saw. The probes end with the courier: a server told to
// stop does not wait for a Herdr that does not answer them.
func (c *Courier) probeHeld(ctx context.Context, t *waitTarget, m outbox.Message) (o observation, next time.Duration, keep, ready bool) {
	poll := c.poll()
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

// claim claims m, and when it is a notice every other notice held for t
// with it (several notices due to one agent are one turn). It returns
// what it claimed.
func (c *Courier) claim(t *waitTarget, m outbox.Message) []outbox.Message {
	if err := c.cfg.Outbox.Claim(&m); err != nil {
		return nil
	}
	batch := []outbox.Message{m}
	if !m.Notice {
		return batch
	}
	ents, err := c.heldFor(t.hash)
	if err != nil {
		return batch
	}
	for _, e := range ents {
		if e.State != outbox.StateHeld || e.ID == m.ID {
			continue
		}
		n, err := c.cfg.Outbox.Read(e)
		if err != nil || !n.Notice || !c.now().Before(n.Expires) {
			continue
		}
		if c.cfg.Outbox.Claim(&n) == nil {
			batch = append(batch, n)
		}
	}
	return batch
}

// settle records the outcome of typing the held message m.
func (c *Courier) settle(m outbox.Message, d string, err error) {
	switch {
	case err == nil && d == deliver.DeliveryNotSubmitted:
		// Typed, and its text is still in the target's composer: not
		// delivered, and never typed again (it would join the unsent
		// text). Its sender learns of it.
		c.crash("typed")
		if err := c.cfg.Outbox.End(m, outbox.EndNotSubmitted, c.now()); err != nil {
			c.log().Warn("outbox: unsubmitted message not recorded", "id", m.ID, "err", err)
		}
		c.log().Warn("held message typed but not submitted: its text is still in the target's composer; it is not typed again",
			"id", m.ID, "to", m.To, "pane_id", m.PaneID)
		c.tellNotSubmitted(m)
	case err == nil && m.Notice:
		// A notice leaves a record that it was typed: whoever ends its
		// request again after a crash must not write it a second time.
		c.crash("typed")
		if err := c.cfg.Outbox.End(m, outbox.EndTyped, c.now()); err != nil {
			c.log().Warn("outbox: typed notice not recorded", "id", m.ID, "err", err)
		}
	case err == nil:
		c.crash("typed")
		if err := c.cfg.Outbox.Done(m); err != nil {
			c.log().Warn("outbox: typed message not removed", "id", m.ID, "err", err)
		}
		c.log().Debug("held message delivered", "id", m.ID, "to", m.To, "pane_id", m.PaneID, "delivery", d,
			"held_for", time.Since(m.Accepted))
	case c.cfg.Ports.TypedMaybe(err):
		_ = c.cfg.Outbox.End(m, outbox.EndMaybeDelivered, c.now())
		c.log().Warn("held message may have been delivered", "id", m.ID, "pane_id", m.PaneID, "err", err)
	case errors.Is(err, proto.ErrPeerNotFound):
		_ = c.cfg.Outbox.End(m, outbox.EndGone, c.now())
	default:
		// Herdr refused before typing (the target became blocked, say):
		// nothing was typed, the message waits on.
		if uerr := c.cfg.Outbox.Unclaim(&m); uerr != nil {
			_ = c.cfg.Outbox.End(m, outbox.EndMaybeDelivered, c.now())
		}
		c.log().Debug("held message not typed yet", "id", m.ID, "pane_id", m.PaneID, "err", err)
	}
}

// typeHeld types a held message: always watched for its submission, so
// that the lock is kept until the turn it starts shows, and the next
// held message waits for that turn to end.
func (c *Courier) typeHeld(ctx, hctx context.Context, target deliver.Agent, id, text string, lease deliver.Lease) (string, error) {
	return c.d.TypeWatched(ctx, hctx, target, text, lease, true, func(at time.Time, seq uint64) { c.requestTyped(id, at, seq) })
}

// oldestHeld returns the oldest message held for t, by any sender, ending
// on the way those that expired and those a typer that died left claimed.
// The caller holds t's lock.
func (c *Courier) oldestHeld(t *waitTarget) (outbox.Message, bool) {
	ents, err := c.heldFor(t.hash)
	if err != nil {
		return outbox.Message{}, false
	}
	now := c.now()
	for _, e := range ents {
		m, err := c.cfg.Outbox.Read(e)
		if err != nil {
			continue
		}
		switch {
		case m.State == outbox.StateTyping:
			c.log().Warn("a held message was being typed by a process that is gone: it may have been delivered, it is not typed again", "id", m.ID, "pane_id", m.PaneID)
			_ = c.cfg.Outbox.End(m, outbox.EndMaybeDelivered, now)
		case !now.Before(m.Expires):
			c.log().Debug("held message expired", "id", m.ID, "pane_id", m.PaneID)
			c.endHeld(m, outbox.EndExpired)
		default:
			return m, true
		}
	}
	return outbox.Message{}, false
}

// endHeld ends held message m untyped (the caller holds its target's
// lock, so one process ends it). Its sender learns of it: a request
// through its record (the courier following it writes the notice), any
// other message by a notice written here. Notices themselves end
// silently.
func (c *Courier) endHeld(m outbox.Message, why string) {
	if err := c.cfg.Outbox.End(m, why, c.now()); err != nil {
		c.log().Warn("outbox: held message not ended", "id", m.ID, "err", err)
		return
	}
	if m.Notice || c.cfg.NoNotices {
		return
	}
	if _, err := c.cfg.Outbox.FindRequest(m.ID); err == nil {
		return
	}
	if err := c.holdNotice(m.ID, m.To, heldOutcome(why), m.From, m.FromKey, m.FromPane, m.FromKind, m.FromWorkspace); err != nil {
		c.log().Warn("notice not written", "id", m.ID, "err", err)
	}
}

// endAll ends every message held for t (its target is gone).
func (c *Courier) endAll(t *waitTarget, why string) {
	ents, err := c.heldFor(t.hash)
	if err != nil {
		return
	}
	for _, e := range ents {
		if m, err := c.cfg.Outbox.Read(e); err == nil {
			c.log().Debug("held message ended", "id", m.ID, "pane_id", m.PaneID, "why", why)
			c.endHeld(m, why)
		}
	}
}

// crash is a test hook: a crash injected at a step of a held delivery.
func (c *Courier) crash(step string) {
	if c.cfg.CrashAt != nil {
		c.cfg.CrashAt(step)
	}
}
