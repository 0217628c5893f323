package link

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link/courier"
)

// Send delivers a herdr-link/1 envelope to the agent named req.To in the
// caller's workspace, wrapped in self-describing text. Deliveries to one
// target are serialized by Locker; in confirm mode Send then watches the
// target for a sign of the submission (see [DeliveryMode]).
func (l *Link) Send(ctx context.Context, req SendRequest) (SendResult, error) {
	// Every input is checked before any round trip, the message and
	// reply_to before the name, so their errors do not depend on the target.
	switch err := CheckMessage(req.Message); {
	case errors.Is(err, ErrMessageTooBig):
		return SendResult{}, newErr(InvalidArgument, detailTooBig, nil)
	case err != nil:
		return SendResult{}, newErr(InvalidArgument, detailBlank, nil)
	}
	if req.ReplyTo != "" && !ValidMessageID(req.ReplyTo) {
		return SendResult{}, newErr(InvalidArgument, detailReplyTo, nil)
	}
	if CheckDeliverable(req.Message, req.ReplyTo) != nil {
		return SendResult{}, newErr(InvalidArgument, detailTooBig, nil)
	}
	if !ValidName(req.To) {
		return SendResult{}, newErr(PeerNotFound, detailPeer, nil)
	}
	// hctx bounds the Herdr work of the send (resolution, bootstrap, the
	// prompt) with the one operation deadline.
	hctx, cancel := l.bound(ctx)
	defer cancel()
	listed := time.Now()
	s, self, err := l.named(hctx)
	if err != nil {
		return SendResult{}, err
	}
	if req.To == self {
		return SendResult{}, newErr(PeerNotFound, detailSelf, nil)
	}
	target, ok := s.peer(req.To, s.self.PaneID)
	if !ok {
		return SendResult{}, newErr(PeerNotFound, detailPeer, nil)
	}
	now := time.Now
	if l.cfg.Now != nil {
		now = l.cfg.Now
	}
	env := Envelope{Protocol: Protocol, ID: NewMessageID(now()), From: self, To: req.To, ReplyTo: req.ReplyTo, Message: req.Message}
	text, err := Wrap(env)
	if err != nil {
		return SendResult{}, newErr(InvalidArgument, detailBlank, err)
	}
	if err := checkTypedLimit(target, text); err != nil {
		return SendResult{}, err
	}
	if req.When == WhenIdle {
		return l.sendIdle(ctx, hctx, s, target, env, text, req)
	}
	sent := sentOf(env)
	target, lease, rec, err := l.recordAndAcquire(hctx, s, target, sent, req, listed)
	if err != nil {
		return SendResult{}, err
	}
	delivery, err := l.c.TypeLocked(ctx, hctx, target, sent, text, lease, rec)
	l.c.AfterTyping(rec, delivery, err)
	if err != nil {
		return SendResult{}, err
	}
	l.log().Debug("sent", "id", env.ID, "from", self, "to", req.To, "pane_id", target.PaneID, "bytes", len(text), "delivery", delivery)
	return SendResult{Status: "sent", ID: env.ID, To: req.To, Delivery: delivery}, nil
}

// recordAndAcquire records the request sent when req expects one, then
// takes target's delivery lock (re-reading the pane when the call's list
// is older than pinFresh). The record (one line of the outbox's ledger)
// must be on disk before the prompt; written before the lock is taken,
// it does not lengthen the lock's hold. A failure forgets it.
func (l *Link) recordAndAcquire(hctx context.Context, s snapshot, target Agent, sent courier.Sent, req SendRequest, listed time.Time) (Agent, Lease, *outbox.Request, error) {
	rec, err := l.recordRequest(s, target, sent, req)
	if err != nil {
		return Agent{}, nil, nil, err
	}
	target, lease, err := l.d.Acquire(hctx, target)
	if err == nil && time.Since(listed) > pinFresh {
		if err = l.d.CheckPinned(hctx, target); err != nil {
			lease.Unlock()
		}
	}
	if err != nil {
		if rec != nil {
			_ = l.cfg.Outbox.ForgetRequest(*rec)
		}
		return Agent{}, nil, nil, err
	}
	return target, lease, rec, nil
}

// pinFresh is how old this call's own agent.list may be, right before
// typing, for the occupant it showed to be trusted without CheckPinned's
// agent.get. The re-read only narrows the window in which another
// occupant can take the pane unseen before the prompt (it cannot close
// it: one round trip remains), and Herdr's answer to the prompt is
// checked after typing in any case (checkOccupant: SEND_FAILED, typed to
// the agent now in that pane). A list read under pinFresh ago was read
// by this call with no wait since (a lock that was held, a target that
// was not ready, a bootstrap: each makes it older), so the re-read would
// show what the list showed but for a change in those few milliseconds;
// past pinFresh the pane is read again.
const pinFresh = 5 * time.Millisecond
