package link

import (
	"context"
	"errors"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link/courier"
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
	sent := sentOf(env)
	rec, err := l.recordRequest(s, target, sent, req)
	if err != nil {
		if lease != nil {
			lease.Unlock()
		}
		return SendResult{}, err
	}
	if why == "" {
		d, err := l.c.TypeLocked(ctx, hctx, target, sent, text, lease, rec)
		if !refusedBusy(err) {
			l.c.AfterTyping(rec, d, err)
			if err != nil {
				return SendResult{}, err
			}
			return SendResult{Status: "sent", ID: env.ID, To: env.To, Delivery: d}, nil
		}
		// Herdr saw the target blocked after our look: nothing was
		// typed; the message waits like any other, its record kept.
		why = "refused: busy"
	}
	if err := l.c.Hold(*s.self, target, sent, text, why); err != nil {
		if rec != nil {
			_ = l.cfg.Outbox.ForgetRequest(*rec)
		}
		return SendResult{}, err
	}
	l.c.Answered(sent)
	return SendResult{Status: "sent", ID: env.ID, To: env.To, Delivery: DeliveryHeld}, nil
}

// DefaultHoldFor is how long a held message waits at most.
const DefaultHoldFor = courier.DefaultHoldFor

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

// expects reports whether req expects a reply: a message without reply_to
// does, an answer does not, unless ExpectReply says otherwise.
func expects(req SendRequest) bool {
	if req.ExpectReply != nil {
		return *req.ExpectReply
	}
	return req.ReplyTo == ""
}

// sentOf is what the courier keeps of env.
func sentOf(env Envelope) courier.Sent {
	return courier.Sent{ID: env.ID, From: env.From, To: env.To, ReplyTo: env.ReplyTo}
}

// recordRequest records the request sent when req expects a reply (see
// [courier.Courier.RecordRequest]); nil when it does not.
func (l *Link) recordRequest(s snapshot, target Agent, sent courier.Sent, req SendRequest) (*outbox.Request, error) {
	if !expects(req) {
		return nil, nil
	}
	return l.c.RecordRequest(*s.self, target, sent)
}
