package link

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/socket"
)

// One delivery to one target: the lock or try-lock, the blocker checks,
// typing the prompt under the lease, the occupant check and the release.
// Send, the hold path and the courier call down into these; nothing here
// calls back up into them.

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
	got, err := l.cfg.Herdr.Prompt(hctx, target.PaneID, text)
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

// takeTurn takes target for a turn of its own now, when it can take one:
// nothing held for it before, its delivery lock free, no blocker, the
// lease begun. Otherwise lease is nil and why says why the message is to
// be held. Messages held for the target already are looked at first
// without the lock (the blocker looks again under it, for one held
// meanwhile): a send right after another to a busy target thus never
// waits for the lock a courier's probe holds. target is updated to what
// Herdr shows now.
func (l *Link) takeTurn(hctx context.Context, target *Agent) (lease Lease, why string, err error) {
	if l.cfg.Outbox != nil {
		if n, err := l.queuedFor(lockKey(*target)); err == nil && n > 0 {
			return nil, "messages held before", nil
		}
	}
	lease, ok, err := l.tryLock(hctx, *target)
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, "lock busy", nil
	}
	why, err = l.blocker(hctx, target)
	if err != nil {
		lease.Unlock()
		return nil, "", err
	}
	if why != "" {
		lease.Unlock()
		return nil, why, nil
	}
	if err := lease.Begin(untilDeadline(hctx)); err != nil {
		lease.Unlock()
		l.log().Warn("delivery lease lost while this process was stopped; holding", "pane_id", target.PaneID, "err", err)
		return nil, "lease lost", nil
	}
	return lease, "", nil
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
	a, err := l.cfg.Herdr.GetAgent(ctx, target.PaneID)
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

func (l *Link) holdFor() time.Duration {
	if l.cfg.HoldFor > 0 {
		return l.cfg.HoldFor
	}
	return DefaultHoldFor
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
	if l.cfg.Outbox != nil {
		n, err := l.queuedFor(lockKey(*target))
		if err != nil {
			return "", l.outboxError(err)
		}
		if n > 0 {
			return "messages held before", nil
		}
	}
	a, err := l.cfg.Herdr.GetAgent(ctx, target.PaneID)
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
	ents, err := l.cfg.Outbox.ListForTarget(l.cfg.Outbox.KeyHash(key))
	return len(ents), err
}

// tryLock takes the target's delivery lock if it is free within
// tryLockWait; ok is false when another delivery holds it.
func (l *Link) tryLock(ctx context.Context, target Agent) (Lease, bool, error) {
	if l.cfg.Locker == nil {
		return noLease{}, true, nil
	}
	lctx, cancel := context.WithTimeout(ctx, tryLockWait)
	defer cancel()
	lease, err := l.cfg.Locker.Lock(lctx, lockKey(target), untilDeadline(ctx))
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

func (l *Link) sendError(err error) error {
	return l.herdrError(opSend, "agent.prompt", err)
}

// Takes reports whether Herdr shows a able to take a typed message as a
// turn of its own: ready ([Ready]) and at rest (idle or done).
func Takes(a Agent) bool {
	st := State(a.Status)
	return Ready(a) && (st == "idle" || st == "done")
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
	if l.cfg.Now != nil {
		return l.cfg.Now()
	}
	return time.Now()
}

// holdsTyping reports whether the screen state c keeps a message from
// being typed, and why: a draft the message would merge with, or a
// picker, dialog or menu it would answer.
func holdsTyping(c ComposerState) (string, bool) {
	switch c {
	case ComposerDraft:
		return "draft", true
	case ComposerOverlay:
		return "picker open", true
	}
	return "", false
}

// DefaultHoldFor is how long a held message waits at most.
const DefaultHoldFor = 30 * time.Minute

// tryLockWait is how long a when-idle send tries for the target's lock:
// a lock held means a delivery is under way, and the target is about to
// be busy.
const tryLockWait = 30 * time.Millisecond
