package link

import (
	"context"
	"errors"
	"strings"
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

// DefaultHoldFor is how long a held message waits at most.
const DefaultHoldFor = 30 * time.Minute

// tryLockWait is how long a when-idle send tries for the target's lock:
// a lock held means a delivery is under way, and the target is about to
// be busy.
const tryLockWait = 30 * time.Millisecond

func (l *Link) holdFor() time.Duration {
	if l.HoldFor > 0 {
		return l.HoldFor
	}
	return DefaultHoldFor
}

// Takes reports whether Herdr shows a able to take a typed message as a
// turn of its own: ready ([Ready]) and at rest (idle or done).
func Takes(a Agent) bool {
	st := State(a.Status)
	return Ready(a) && (st == "idle" || st == "done")
}

// lockKey is the delivery lock's key of target: its terminal id, or
// "pane:" and its pane id when Herdr reports none. It is a copy: a lock
// may outlive the call, and the terminal id is part of a whole agent.list
// answer.
func lockKey(a Agent) string {
	if a.TerminalID != "" {
		return strings.Clone(a.TerminalID)
	}
	return "pane:" + a.PaneID
}

// sendIdle is Send with WhenIdle: the message is typed now if the target
// can take it as a turn of its own and nothing is held for it before,
// else held.
func (l *Link) sendIdle(ctx, hctx context.Context, s snapshot, target Agent, env Envelope, text string, req SendRequest) (SendResult, error) {
	res := SendResult{Status: "sent", ID: env.ID, To: env.To}
	// Messages held for the target already: this one waits behind them
	// (holding needs no lock; the check is made again under it below, for
	// one held meanwhile). A send right after another to a busy target
	// thus never waits for the lock a courier's probe holds.
	if l.Outbox != nil {
		if n, err := l.queuedFor(lockKey(target)); err == nil && n > 0 {
			return l.holdRequest(s, target, env, text, req, "messages held before")
		}
	}
	lease, ok, err := l.tryLock(hctx, target)
	if err != nil {
		return SendResult{}, err
	}
	if !ok {
		return l.holdRequest(s, target, env, text, req, "lock busy")
	}
	why, err := l.blocker(hctx, &target)
	if err != nil {
		lease.Unlock()
		return SendResult{}, err
	}
	if why != "" {
		lease.Unlock()
		return l.holdRequest(s, target, env, text, req, why)
	}
	if err := lease.Begin(untilDeadline(hctx)); err != nil {
		lease.Unlock()
		l.log().Warn("delivery lease lost while this process was stopped; holding", "pane_id", target.PaneID, "err", err)
		return l.holdRequest(s, target, env, text, req, "lease lost")
	}
	rec, err := l.recordRequest(s, target, env, req)
	if err != nil {
		lease.Unlock()
		return SendResult{}, err
	}
	d, err := l.typeLocked(ctx, hctx, target, env, text, lease, rec)
	if refusedBusy(err) {
		// Herdr saw the target blocked after our look: nothing was
		// typed; the message waits like any other.
		if rec != nil {
			_ = l.Outbox.ForgetRequest(*rec)
		}
		return l.holdRequest(s, target, env, text, req, "refused: busy")
	}
	l.afterTyping(rec, d, err)
	if err != nil {
		return SendResult{}, err
	}
	res.Delivery = d
	return res, nil
}

// refusedBusy reports whether err is Herdr refusing a prompt, nothing
// typed, because the target is blocked. (Not ready is not waited for: an
// agent Herdr cannot prompt stays so.)
func refusedBusy(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Detail == detailBlocked
}

// blocker says why target cannot take a message as a turn of its own now
// ("" when it can): a message held for it already (FIFO), its state, a
// draft in its composer. The caller holds the target's lock; target is
// updated to what Herdr shows now.
func (l *Link) blocker(ctx context.Context, target *Agent) (string, error) {
	if l.Outbox != nil {
		n, err := l.queuedFor(lockKey(*target))
		if err != nil {
			return "", l.outboxError(err)
		}
		if n > 0 {
			return "messages held before", nil
		}
	}
	a, err := l.Herdr.GetAgent(ctx, target.PaneID)
	if err != nil {
		return "", l.probeError(err)
	}
	if !sameOccupant(*target, a) {
		return "", newErr(PeerNotFound, detailPeer, nil)
	}
	a.Name, a.WorkspaceID = target.Name, target.WorkspaceID
	*target = a
	if !Takes(a) {
		return "state " + a.Status, nil
	}
	if c, err := l.composer(ctx, a); err == nil {
		if why, held := holdsTyping(c); held {
			return why, nil
		}
	}
	return "", nil
}

// queuedFor counts the messages held (or being typed) for the target of
// lock key key, by any sender.
func (l *Link) queuedFor(key string) (int, error) {
	ents, err := l.Outbox.ListForTarget(l.Outbox.KeyHash(key))
	return len(ents), err
}

// tryLock takes the target's delivery lock if it is free within
// tryLockWait; ok is false when another delivery holds it.
func (l *Link) tryLock(ctx context.Context, target Agent) (Lease, bool, error) {
	if l.Locker == nil {
		return noLease{}, true, nil
	}
	lctx, cancel := context.WithTimeout(ctx, tryLockWait)
	defer cancel()
	lease, err := l.Locker.Lock(lctx, lockKey(target), untilDeadline(ctx))
	switch {
	case err == nil:
		return lease, true, nil
	case ctx.Err() != nil:
		return nil, false, ctxErr(ctx)
	case lctx.Err() != nil:
		return nil, false, nil
	}
	l.log().Error("delivery lock unusable; refusing to deliver unserialized", "err", err)
	return nil, false, lockError(err)
}

// holdRequest holds the message, and records it as a request when it is
// one.
func (l *Link) holdRequest(s snapshot, target Agent, env Envelope, text string, req SendRequest, why string) (SendResult, error) {
	if l.Outbox == nil {
		return l.hold(s, target, env, text, why)
	}
	rec, err := l.recordRequest(s, target, env, req)
	if err != nil {
		return SendResult{}, err
	}
	res, err := l.hold(s, target, env, text, why)
	if err != nil && rec != nil {
		_ = l.Outbox.ForgetRequest(*rec)
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
	if l.Outbox == nil {
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
	if _, err := l.Outbox.Add(m, now); err != nil {
		return SendResult{}, l.outboxError(err)
	}
	l.log().Debug("held", "id", env.ID, "to", env.To, "pane_id", target.PaneID, "why", why, "bytes", len(text))
	l.kickCourier(l.Outbox.KeyHash(m.TargetKey))
	return SendResult{Status: "sent", ID: env.ID, To: env.To, Delivery: DeliveryHeld}, nil
}

func (l *Link) outboxError(err error) error {
	var full *outbox.FullError
	if errors.As(err, &full) {
		if full.Target {
			return newErr(SendFailed, detailFullTarget, err)
		}
		return newErr(SendFailed, detailFull, err)
	}
	l.log().Error("outbox unusable", "err", err)
	if noSpace(err) {
		return newErr(SendFailed, detailOutboxSpace, err)
	}
	return newErr(SendFailed, detailNoOutbox, err)
}

func (l *Link) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// owed is what the sender of lock key from has outstanding, per target
// key hash: messages held, and requests awaiting a reply (ids, oldest
// first). For Peers: one look at the sender's own entries.
func (l *Link) owed(from string) (held map[string]int, awaiting map[string][]string) {
	if l.Outbox == nil {
		return nil, nil
	}
	held, awaiting, err := l.Outbox.CountsForSender(l.Outbox.KeyHash(from))
	if err != nil {
		return nil, nil
	}
	return held, awaiting
}
