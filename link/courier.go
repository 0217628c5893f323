package link

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/link/courier"
	"github.com/herdr-link/herdr-link/link/deliver"
)

// newCourier is the courier of l, made of l's Config on top of l's
// delivery core: what it needs of the protocol (errors, the composer)
// comes from l.
func newCourier(l *Link) *courier.Courier {
	return courier.New(courier.Config{
		Herdr: l.cfg.Herdr, Deliverer: l.d, Ports: courierPorts{l}, Outbox: l.cfg.Outbox,
		Locker: l.cfg.Locker, Logger: l.log(), Confirm: l.cfg.Delivery == DeliveryConfirm,
		CallTimeout: l.callTimeout(), Now: l.cfg.Now, HoldFor: l.cfg.HoldFor, Poll: l.cfg.CourierPoll,
		ReplyGrace: l.cfg.ReplyGrace, RequestTTL: l.cfg.RequestTTL, ProgressEvery: l.cfg.ProgressEvery,
		NoNotices: l.cfg.NoNotices, CrashAt: l.cfg.CrashAt,
	})
}

// courierPorts is what link supplies to its courier.
type courierPorts struct{ l *Link }

func (p courierPorts) Fail(why courier.Failure, cause error) error {
	if why == courier.NoOutbox {
		return newErr(SendFailed, detailNoOutbox, cause)
	}
	return newErr(InvalidArgument, detailNoRequest, cause)
}

func (p courierPorts) OutboxFailed(err error) error { return p.l.outboxError(err) }

func (p courierPorts) Ended(ctx context.Context) error { return ctxErr(ctx) }

func (p courierPorts) TypedMaybe(err error) bool { return typedMaybe(err) }

func (p courierPorts) Composer(ctx context.Context, a Agent) (hold string, none bool) {
	c, err := p.l.composer(ctx, a)
	if err != nil {
		return "", false
	}
	if why, held := holdsTyping(c); held {
		return why, false
	}
	return "", c == ComposerUnknown && ComposerKnown(a.Kind)
}

// typedMaybe reports whether a failed delivery may have typed its text.
func typedMaybe(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return true
	}
	switch e.Detail {
	case detailMaybeSent, detailClosedDuring, detailChanged:
		return true
	}
	return false
}

// The courier's defaults (see package link/courier).
const (
	// DefaultCourierPoll is the spacing of the courier's probes of a
	// target it waits for, when no event woke it sooner.
	DefaultCourierPoll = courier.DefaultPoll
	// DefaultReplyGrace is how long a recipient whose turn with a request
	// ended has to answer it before the request counts as handled.
	DefaultReplyGrace = courier.DefaultReplyGrace
	// DefaultRequestTTL is how long a request is tracked at most.
	DefaultRequestTTL = courier.DefaultRequestTTL
	// DefaultWaitTimeout and MaxWaitTimeout bound WaitReply's timeout.
	DefaultWaitTimeout = courier.DefaultWaitTimeout
	MaxWaitTimeout     = courier.MaxWaitTimeout
	// OnceBudget bounds the Herdr work of one [Link.DeliverOnce] target.
	OnceBudget = courier.OnceBudget
)

// RequestPending is the state of a request without an outcome, as
// herdr_link_wait reports it.
const RequestPending = courier.RequestPending

// Deliver runs the courier until ctx ends (see [courier.Courier.Deliver]):
// it types the held messages as their targets become ready and gives the
// pending requests their outcomes. Without an Outbox it only waits for
// ctx.
func (l *Link) Deliver(ctx context.Context) error {
	if l.cfg.Outbox == nil {
		<-ctx.Done()
		return nil
	}
	return l.c.Deliver(ctx)
}

// DeliverDue serves once what is due for the agent of pane paneID, as a
// round of [Link.Deliver] would (see [courier.Courier.DeliverDue]). It
// returns whether anything still waits on that agent.
func (l *Link) DeliverDue(ctx context.Context, paneID string) (bool, error) {
	if l.cfg.Outbox == nil {
		return false, nil
	}
	return l.c.DeliverDue(ctx, paneID)
}

// OnceReport is what one [Link.DeliverOnce] pass did.
type OnceReport = courier.OnceReport

// ErrNoOutbox is returned by [Link.DeliverOnce] without an Outbox.
var ErrNoOutbox = courier.ErrNoOutbox

// DeliverOnce is one pass of the courier over what no running
// herdr-link process serves (see [courier.Courier.DeliverOnce]). The
// caller calls [Link.Wait] before it exits.
func (l *Link) DeliverOnce(ctx context.Context, pane string) (OnceReport, error) {
	if l.cfg.Outbox == nil {
		return OnceReport{}, ErrNoOutbox
	}
	return l.c.DeliverOnce(ctx, pane)
}

// WaitResult is what WaitReply returns: the request, its recipient, and
// its state (pending, or its outcome).
type WaitResult = courier.WaitResult

// WaitReply waits until the caller's request id has an outcome, or
// timeout passes (state pending), or ctx ends (its error). The reply
// itself is not part of the result: it arrives as the caller's next
// turn. progress, when set, is called every few seconds while waiting.
// An id that is not one of the caller's requests (unknown, ended long
// ago, or another agent's) is INVALID_ARGUMENT, all alike.
func (l *Link) WaitReply(ctx context.Context, id string, timeout time.Duration, progress func(waited time.Duration)) (WaitResult, error) {
	if !ValidMessageID(id) {
		return WaitResult{}, newErr(InvalidArgument, detailWaitID, nil)
	}
	if l.cfg.Outbox == nil {
		return WaitResult{}, newErr(InvalidArgument, detailNoRequest, nil)
	}
	hctx, cancel := l.bound(ctx)
	s, _, err := l.named(hctx)
	cancel()
	if err != nil {
		return WaitResult{}, err
	}
	return l.c.WaitReply(ctx, *s.self, id, timeout, progress)
}

// lockKey is the delivery lock's key of target ([deliver.LockKey]).
func lockKey(a Agent) string { return deliver.LockKey(a) }
