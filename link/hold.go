package link

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
)

// When says when Send types a message.
type When int

const (
	// WhenIdle (the zero value) types the message only when the target
	// can take it as a turn of its own: not working, not blocked, not
	// still starting, and no user draft in its composer. Otherwise the
	// message is held in the outbox and typed as soon as the target is
	// ready (delivery "held").
	WhenIdle When = iota
	// WhenNow types it at once, whatever the target is doing: a working
	// target queues it or is interrupted by it.
	WhenNow
)

// String returns "idle" or "now".
func (w When) String() string {
	if w == WhenNow {
		return "now"
	}
	return "idle"
}

// ParseWhen parses "idle" or "now".
func ParseWhen(s string) (When, error) {
	switch s {
	case "idle":
		return WhenIdle, nil
	case "now":
		return WhenNow, nil
	}
	return 0, errors.New(`when must be "idle" or "now"`)
}

// DeliveryHeld: the target could not take the message as a turn of its
// own yet; it waits in the outbox and is typed when the target is ready.
const DeliveryHeld = "held"

// sendIdle is Send with WhenIdle: the message is typed now if the target
// can take it as a turn of its own and nothing is held for it before,
// else held. A request is recorded once, before it is typed or held.
func (l *Link) sendIdle(ctx, hctx context.Context, s snapshot, target Agent, env Envelope, text string, req SendRequest) (SendResult, error) {
	lease, why, err := l.d.TakeTurn(hctx, &target)
	if err != nil {
		return SendResult{}, err
	}
	rec, err := l.recordRequest(s, target, env, req)
	if err != nil {
		if lease != nil {
			lease.Unlock()
		}
		return SendResult{}, err
	}
	if why == "" {
		d, err := l.typeLocked(ctx, hctx, target, env, text, lease, rec)
		if !refusedBusy(err) {
			l.afterTyping(rec, d, err)
			if err != nil {
				return SendResult{}, err
			}
			return SendResult{Status: "sent", ID: env.ID, To: env.To, Delivery: d}, nil
		}
		// Herdr saw the target blocked after our look: nothing was
		// typed; the message waits like any other, its record kept.
		why = "refused: busy"
	}
	res, err := l.hold(s, target, env, text, why)
	if err != nil && rec != nil {
		_ = l.cfg.Outbox.ForgetRequest(*rec)
	}
	if err == nil {
		l.markReplied(s, target, env)
	}
	return res, err
}

// hold stores the message in the outbox for the courier ([Link.Deliver])
// of this process, or of any other serving the same Herdr once this one
// is gone.
func (l *Link) hold(s snapshot, target Agent, env Envelope, text, why string) (SendResult, error) {
	if l.cfg.Outbox == nil {
		l.log().Info("target busy and no outbox to hold the message in", "pane_id", target.PaneID, "why", why)
		return SendResult{}, newErr(SendFailed, detailNoOutbox, nil)
	}
	now := l.now()
	m := outbox.Message{
		ID: env.ID, Expires: now.Add(l.holdFor()),
		To: env.To, From: env.From, TargetKey: lockKey(target), FromKey: lockKey(*s.self),
		PaneID: target.PaneID, TerminalID: target.TerminalID, Kind: target.Kind, WorkspaceID: target.WorkspaceID,
		Session: sessionOf(target), Reason: why, FromPane: s.self.PaneID, FromKind: s.self.Kind, FromWorkspace: s.self.WorkspaceID, Text: text,
	}
	if _, err := l.cfg.Outbox.Add(m, now); err != nil {
		return SendResult{}, l.outboxError(err)
	}
	l.log().Debug("held", "id", env.ID, "to", env.To, "pane_id", target.PaneID, "why", why, "bytes", len(text))
	l.kickCourier(l.cfg.Outbox.KeyHash(m.TargetKey))
	return SendResult{Status: "sent", ID: env.ID, To: env.To, Delivery: DeliveryHeld}, nil
}

// DefaultHoldFor is how long a held message waits at most.
const DefaultHoldFor = 30 * time.Minute

func (l *Link) holdFor() time.Duration {
	if l.cfg.HoldFor > 0 {
		return l.cfg.HoldFor
	}
	return DefaultHoldFor
}

// owed is what the sender of lock key from has outstanding, per target
// key hash: messages held, and requests awaiting a reply (ids, oldest
// first). For Peers: one look at the sender's own entries.
func (l *Link) owed(from string) (held map[string]int, awaiting map[string][]string) {
	if l.cfg.Outbox == nil {
		return nil, nil
	}
	held, awaiting, err := l.cfg.Outbox.CountsForSender(l.cfg.Outbox.KeyHash(from))
	if err != nil {
		return nil, nil
	}
	return held, awaiting
}

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
