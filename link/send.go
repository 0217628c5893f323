package link

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/socket"
)

// SendRequest is what a model asks Send to do.
type SendRequest struct {
	To      string
	Message string
	ReplyTo string
	// When says when to type it: WhenIdle (the zero value) or WhenNow.
	When When
	// ExpectReply, when set, says whether the message expects a reply;
	// by default a message without ReplyTo is a request (it does) and an
	// answer (with ReplyTo) does not.
	ExpectReply *bool
}

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
	if l.Now != nil {
		now = l.Now
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
	// The request's record is written while the lock is acquired (both
	// wait on the file system): it must be on disk before the prompt.
	recorded := l.recordRequestAsync(s, target, env, req)
	target, lease, err := l.acquire(hctx, target)
	rec, rerr := recorded()
	if err != nil {
		if rec != nil {
			_ = l.Outbox.ForgetRequest(*rec)
		}
		return SendResult{}, err
	}
	if rerr == nil {
		rerr = l.checkPinned(hctx, target)
		if rerr != nil && rec != nil {
			_ = l.Outbox.ForgetRequest(*rec)
		}
	}
	if rerr != nil {
		lease.Unlock()
		return SendResult{}, rerr
	}
	delivery, err := l.typeLocked(ctx, hctx, target, env, text, lease, rec)
	l.afterTyping(rec, delivery, err)
	if err != nil {
		return SendResult{}, err
	}
	l.log().Debug("sent", "id", env.ID, "from", self, "to", req.To, "pane_id", target.PaneID, "bytes", len(text), "delivery", delivery)
	return SendResult{Status: "sent", ID: env.ID, To: req.To, Delivery: delivery}, nil
}

// typeLocked types text into target under lease (held, and begun): the
// prompt, the occupant check, the confirmation watch in confirm mode,
// and the release of the lock once Herdr's Enter is past. hctx bounds the
// prompt; the watch runs on ctx with its own budget.
func (l *Link) typeLocked(ctx, hctx context.Context, target Agent, env Envelope, text string, lease Lease, rec *outbox.Request) (string, error) {
	typed := func(at time.Time, seq uint64) {
		if rec != nil {
			// Recorded off the send's path: the courier follows the
			// request from its record, and until this is written it sees
			// a request typed by a process that did not record it yet.
			e := rec.Entry()
			l.background(func() {
				if err := l.Outbox.MarkTyped(e, at, seq); err != nil {
					l.log().Warn("request: typing not recorded", "id", e.ID, "err", err)
				}
			})
		}
		if env.ReplyTo != "" {
			l.markRepliedID(env.ReplyTo, env.From, env.To)
		}
	}
	return l.typeWatched(ctx, hctx, target, text, lease, l.Delivery == DeliveryConfirm, typed)
}

// typeWatched is typeLocked, with the confirmation watch when watch is
// set whatever the delivery mode. typed is called as soon as the text
// may be in the pane (Herdr accepted it, or its answer was lost after the
// request was written), with the target's state_change_seq Herdr showed
// (0 when not known).
func (l *Link) typeWatched(ctx, hctx context.Context, target Agent, text string, lease Lease, watch bool, typed func(time.Time, uint64)) (string, error) {
	unlock := lease.Unlock
	// The pane id from this snapshot is workspace-scoped: if the target
	// moved to another workspace since, Herdr no longer accepts it as an
	// agent target and nothing crosses the boundary.
	caps := l.capabilities(hctx)
	text = TypedText(target.Kind, text)
	ev := l.openWatch(hctx, target, watch)
	defer ev.close()
	sent := time.Now()
	got, err := l.Herdr.Prompt(hctx, target.PaneID, text)
	accepted := time.Now()
	lease.Extend(l.leaseAfterPrompt(len(text)))
	if err != nil {
		if errors.Is(err, socket.ErrAfterWrite) {
			// The text may be in the pane: keep the lock past the Enter.
			l.releaseAfter(accepted, l.submitHold(), unlock)
			typed(accepted, 0)
		} else {
			unlock()
		}
		return "", l.sendError(err)
	}
	// Herdr accepted the prompt: the operation deadline is spent here. Any
	// work after acceptance (a delivery-confirmation watch) runs on ctx
	// with a budget of its own, not on hctx.
	typed(accepted, got.Seq)
	l.noteTyped(target.PaneID, got)
	if err := l.checkOccupant(target, got); err != nil {
		l.releaseAfter(accepted, l.submitHold(), unlock)
		return "", err
	}
	delivery := DeliveryUnconfirmed
	if watch {
		delivery = l.confirm(ctx, caps, target, got, len(text), ev)
	}
	l.release(delivery, accepted, l.holdAfterAnswer(caps, sent, accepted), unlock)
	l.log().Debug("typed", "pane_id", target.PaneID, "bytes", len(text),
		"kind", got.Kind, "status_before", got.Status, "delivery", delivery, "took", time.Since(accepted))
	return delivery, nil
}

// acquire waits for a target that cannot take a turn yet (still
// starting), then for its delivery lock — Herdr-side work of the send,
// bounded by the operation deadline — and makes the lease's last check
// before typing: a lease broken while this process was stopped is another
// delivery's turn now. It returns the target as last seen.
func (l *Link) acquire(hctx context.Context, target Agent) (Agent, Lease, error) {
	target, err := l.awaitReady(hctx, target)
	if err != nil {
		return Agent{}, nil, err
	}
	lease, err := l.lockDelivery(hctx, target)
	if err != nil {
		l.log().Info("delivery lock not acquired", "to", target.Name, "pane_id", target.PaneID, "err", err)
		return Agent{}, nil, err
	}
	if err := lease.Begin(untilDeadline(hctx)); err != nil {
		lease.Unlock()
		l.log().Warn("delivery lease lost while this process was stopped; not typing", "pane_id", target.PaneID, "err", err)
		return Agent{}, nil, newErr(SendFailed, detailLeaseLost, err)
	}
	return target, lease, nil
}

func (l *Link) sendError(err error) error {
	return l.herdrError(opSend, "agent.prompt", err)
}

// release releases the delivery lock once Herdr's Enter is past:
// submitHold after Herdr's answer (or at once when that is over). A
// queued delivery does not hold through the running turn: further
// deliveries join the queued turn (the host merges queued input by
// design), each envelope on lines of its own.
//
// Even a delivery seen submitted keeps the lock until the hold has
// passed: Herdr's status may flap (a state_change_seq step before Herdr's
// Enter), and a lock released on such a sign would let the next sender
// type into the same composer. (A Herdr that answers after its Enter
// gives a hold of 0: the Enter is past.)
func (l *Link) release(_ string, accepted time.Time, hold time.Duration, unlock func()) {
	l.releaseAfter(accepted, hold, unlock)
}

// checkPinned reads the target once more right before it is typed into,
// under its lock, and fails (nothing typed) unless it is still the
// occupant the message was accepted for: the same terminal, kind and
// agent session. An agent that exited leaves its name bound for a while
// (Herdr #4764), so the name alone may already be the next occupant's.
func (l *Link) checkPinned(ctx context.Context, target Agent) error {
	a, err := l.Herdr.GetAgent(ctx, target.PaneID)
	if err != nil {
		return l.probeError(err)
	}
	if target.TerminalID != "" && a.TerminalID != "" {
		a.Name = target.Name // the terminal decides: a rename alone is the same agent
	}
	if !sameOccupant(target, a) {
		l.log().Info("target's occupant changed before typing; nothing typed", "pane_id", target.PaneID,
			"want_terminal", target.TerminalID, "got_terminal", a.TerminalID, "want_kind", target.Kind, "got_kind", a.Kind)
		return newErr(PeerNotFound, detailPeer, nil)
	}
	return nil
}

// checkOccupant fails when the prompt reached another occupant of the
// target's pane than the one resolved; a rename of the same agent is
// logged and passes.
func (l *Link) checkOccupant(target, got Agent) error {
	if !sameOccupant(target, got) {
		l.log().Warn("prompt reached a different occupant", "pane_id", target.PaneID, "want_name", target.Name, "got_name", got.Name,
			"want_terminal", target.TerminalID, "got_terminal", got.TerminalID, "want_kind", target.Kind, "got_kind", got.Kind)
		return newErr(SendFailed, detailChanged, nil)
	}
	if got.Name != target.Name {
		// The same agent renamed itself between agent.list and the
		// prompt: the message reached it.
		l.log().Info("target renamed during delivery", "pane_id", target.PaneID, "want_name", target.Name, "got_name", got.Name)
	}
	return nil
}

// sameOccupant reports whether the agent Herdr's prompt answer shows (got)
// is the one resolved (target): the same pane, the same terminal, and the
// same agent kind (a different agent started in that terminal replaces
// the occupant). A name change alone is a rename of the same agent. When
// Herdr reports no terminal id, the name is all there is to compare.
func sameOccupant(target, got Agent) bool {
	switch {
	case got.PaneID != target.PaneID:
		return false
	case !sameSession(sessionOf(target), got):
		return false
	case target.TerminalID != "" && got.TerminalID != "":
		return got.TerminalID == target.TerminalID && (target.Kind == "" || got.Kind == "" || got.Kind == target.Kind)
	}
	return got.Name == target.Name
}

// sameSession reports whether got is still in the agent session pinned
// (pinned "" when Herdr reported none at acceptance): a session reported
// then and another, or none, now is another occupant (an agent that
// exited, and the next one started in the same terminal).
func sameSession(pinned string, got Agent) bool {
	return pinned == "" || sessionOf(got) == pinned
}
