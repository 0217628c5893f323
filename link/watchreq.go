package link

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/socket"
)

// watchedRequest is a pending request the courier follows. What it saw of
// the recipient's turn is kept here, not on disk: a courier that starts
// over (another process) looks at the recipient afresh.
type watchedRequest struct {
	e    outbox.Entry
	pane string
	due  time.Time
	// busy: the recipient was seen working since the request was typed;
	// rest: since when it has been at rest after that.
	busy bool
	rest time.Time
}

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

// watchRequest looks at the pending request w once and ends it when its
// outcome is known. It returns when to look again, and whether it is
// still pending.
func (l *Link) watchRequest(ctx context.Context, w *watchedRequest) (time.Duration, bool) {
	poll := l.courierPoll()
	r, err := l.Outbox.Request(w.e)
	switch {
	case errors.Is(err, outbox.ErrNotFound):
		return 0, false
	case err != nil:
		return poll, true
	case r.State != outbox.StatePending:
		return 0, false
	}
	now := l.now()
	if !now.Before(r.Expires) {
		l.endRequest(w.e, outbox.OutcomeExpired)
		return 0, false
	}
	if r.Typed.IsZero() {
		return l.followHeld(w, r, poll)
	}
	hctx, cancel := l.bound(ctx)
	defer cancel()
	a, err := l.Herdr.GetAgent(hctx, r.PaneID)
	switch {
	case errors.Is(err, socket.ErrAgentNotFound):
		l.endRequest(w.e, outbox.OutcomeGone)
		return 0, false
	case err != nil:
		return poll, true
	case r.TerminalID != "" && a.TerminalID != r.TerminalID,
		r.Kind != "" && a.Kind != "" && a.Kind != r.Kind,
		a.WorkspaceID != r.WorkspaceID:
		l.endRequest(w.e, outbox.OutcomeGone)
		return 0, false
	}
	moved := r.TypedSeq != 0 && a.Seq != r.TypedSeq
	switch State(a.Status) {
	case "blocked":
		if moved || w.busy {
			l.endRequest(w.e, outbox.OutcomeBlocked)
			return 0, false
		}
		return poll, true
	case "working":
		w.busy, w.rest = true, time.Time{}
		return poll, true
	}
	if !w.busy && !moved {
		if r.TypedSeq == 0 && now.Sub(r.Typed) > l.callTimeout()+l.replyGrace() {
			// Typed with no state_change_seq known (by a process that
			// died, or Herdr's answer was lost) and no turn seen since:
			// none will show. The notice asks the sender to send again.
			l.endRequest(w.e, outbox.OutcomeHandled)
			return 0, false
		}
		return poll, true // its turn has not shown yet
	}
	if w.rest.IsZero() {
		w.rest = now
	}
	if left := l.replyGrace() - now.Sub(w.rest); left > 0 {
		return min(left, poll), true
	}
	l.endRequest(w.e, outbox.OutcomeHandled)
	return 0, false
}

// followHeld follows a request that has not been typed: its held message
// waits, ended (the request ends likewise), or was typed by a process
// that died before it recorded so.
func (l *Link) followHeld(w *watchedRequest, r outbox.Request, poll time.Duration) (time.Duration, bool) {
	e, err := l.Outbox.Find(r.ID)
	switch {
	case err == nil && e.Held():
		return poll, true
	case err == nil && e.State == outbox.StateEnded:
		m, err := l.Outbox.Read(e)
		if err != nil {
			return poll, true
		}
		if m.End == outbox.EndMaybeDelivered {
			_ = l.Outbox.MarkTyped(w.e, l.now(), 0)
			return poll, true
		}
		l.endRequest(w.e, heldOutcome(m.End))
		return 0, false
	case errors.Is(err, outbox.ErrNotFound):
		// No held message: typed, by a process that did not live to
		// record it (or the record is just being written).
		if l.now().Sub(r.Accepted) > l.callTimeout() {
			_ = l.Outbox.MarkTyped(w.e, l.now(), 0)
		}
		return poll, true
	}
	return poll, true
}
