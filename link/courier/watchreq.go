package courier

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link/deliver"
)

// heldOutcome is the outcome of a request whose held message ended
// without being typed.
func heldOutcome(end string) string {
	switch end {
	case outbox.EndExpired:
		return outbox.OutcomeExpired
	case outbox.EndCancelled:
		return outbox.OutcomeCancelled
	case outbox.EndNotSubmitted:
		return outbox.OutcomeNotSubmitted
	}
	return outbox.OutcomeGone
}

// followRequests gives each pending request of t whose outcome shows
// it, from one observation of t: obs when the caller made one (its
// delivery's probe), else one probe made here when a request needs it
// (none while every request waits in the outbox). A request is judged
// only by an observation made after it was typed. It returns when to look
// again; what it ended leaves t.reqs.
func (c *Courier) followRequests(ctx context.Context, t *waitTarget, obs *observation) time.Duration {
	next := c.poll()
	now := c.now()
	others := map[string]*observation{} // recipients in another pane than t's (not expected)
	for id, w := range t.reqs {
		if !now.Before(w.r.Expires) {
			c.endRequest(w.e, outbox.OutcomeExpired)
			delete(t.reqs, id)
			continue
		}
		if w.r.Typed.IsZero() {
			if t.heldIDs[id] {
				continue // its message waits in the outbox
			}
			r, err := c.cfg.Outbox.Request(w.e)
			switch {
			case errors.Is(err, outbox.ErrNotFound):
				delete(t.reqs, id)
				continue
			case err != nil:
				continue
			case r.State != outbox.StatePending:
				delete(t.reqs, id)
				continue
			}
			w.r = r
			if r.Typed.IsZero() {
				if !c.followHeld(w, r) {
					delete(t.reqs, id)
				}
				continue
			}
		}
		o := obs
		if w.r.PaneID != t.pane {
			o = others[w.r.PaneID]
		}
		if o == nil || !o.at.After(w.r.Typed) {
			fresh := c.observe(ctx, w.r.PaneID)
			o = &fresh
			if w.r.PaneID == t.pane {
				obs = o
			} else {
				others[w.r.PaneID] = o
			}
		}
		d, keep := c.judgeRequest(w, *o, now)
		if !keep {
			delete(t.reqs, id)
			continue
		}
		next = min(next, d)
	}
	return next
}

// judgeRequest gives the typed pending request w its outcome when o, an
// observation of its recipient made after it was typed, shows it. It
// returns when to look again, and whether it is still pending.
func (c *Courier) judgeRequest(w *watchedRequest, o observation, now time.Time) (time.Duration, bool) {
	poll := c.poll()
	r, a := w.r, o.a
	switch {
	case o.gone(r.TerminalID, r.Kind, r.WorkspaceID):
		c.endRequest(w.e, outbox.OutcomeGone)
		return 0, false
	case o.err != nil:
		return poll, true
	}
	moved := r.TypedSeq != 0 && a.Seq != r.TypedSeq
	completed, known := c.typed.completedSince(r.PaneID, r.TypedSeq, a)
	if completed {
		moved = true // a completed task since the typing: its turn ran
	}
	switch deliver.State(a.Status) {
	case "blocked":
		if moved || w.busy {
			c.endRequest(w.e, outbox.OutcomeBlocked)
			return 0, false
		}
		return poll, true
	case "working":
		w.busy, w.rest = true, time.Time{}
		return poll, true
	}
	if !w.busy && !moved {
		if r.TypedSeq == 0 && now.Sub(r.Typed) > c.cfg.CallTimeout+c.replyGrace() {
			// Typed with no state_change_seq known (by a process that
			// died, or Herdr's answer was lost) and no turn seen since:
			// none will show. The notice asks the sender to send again.
			c.endRequest(w.e, outbox.OutcomeHandled)
			return 0, false
		}
		return poll, true // its turn has not shown yet
	}
	if w.rest.IsZero() {
		w.rest = now
	}
	if left := c.replyGrace() - now.Sub(w.rest); left > 0 {
		return min(left, poll), true
	}
	if known && !completed {
		// Herdr counts completed tasks and shows none since the typing:
		// this rest is not the end of its turn (a restore, a switch, a
		// flap). The request waits for a completion, or its expiry.
		w.rest = time.Time{}
		return poll, true
	}
	c.typed.forget(r.PaneID, r.TypedSeq)
	c.endRequest(w.e, outbox.OutcomeHandled)
	return 0, false
}

// followHeld follows a request that has not been typed: its held message
// waits, ended (the request ends likewise), or was typed by a process
// that died before it recorded so. It reports whether the request is
// still pending.
func (c *Courier) followHeld(w *watchedRequest, r outbox.Request) bool {
	e, err := c.cfg.Outbox.Find(r.ID)
	switch {
	case err == nil && e.Held():
		return true
	case err == nil && e.State == outbox.StateEnded:
		m, err := c.cfg.Outbox.Read(e)
		if err != nil {
			return true
		}
		if m.End == outbox.EndMaybeDelivered {
			_ = c.cfg.Outbox.MarkTyped(w.e, c.now(), 0)
			return true
		}
		c.endRequest(w.e, heldOutcome(m.End))
		return false
	case errors.Is(err, outbox.ErrNotFound):
		// No held message: typed, by a process that did not live to
		// record it (or the record is just being written) — unless the
		// store set it aside as damaged while it was still held: then
		// it was never typed, and the request ends as cancelled (its
		// sender is told it was not delivered), never as typed.
		if c.now().Sub(r.Accepted) > c.cfg.CallTimeout {
			if c.heldDamaged(r.ID) {
				c.endRequest(w.e, outbox.OutcomeCancelled)
				return false
			}
			_ = c.cfg.Outbox.MarkTyped(w.e, c.now(), 0)
		}
	}
	return true
}

// heldDamaged reports whether the held message of request id was set
// aside as damaged before anyone began typing it. It lists the store's
// directory: it runs once per request, when its held message is missing.
func (c *Courier) heldDamaged(id string) bool {
	ds, err := c.cfg.Outbox.Damaged()
	if err != nil {
		return false
	}
	for _, d := range ds {
		if d.ID == id && d.State == outbox.StateHeld {
			return true
		}
	}
	return false
}
