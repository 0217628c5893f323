package deliver

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/socket"
)

// One delivery to one target: the lock or try-lock, the blocker checks,
// typing the prompt under the lease, the occupant check and the release.
// Send, the hold path and the courier call down into these; nothing here
// calls back up into them.

// TypeWatched types text into target under lease, with the confirmation
// watch when watch is set whatever the delivery mode. typed is called as
// soon as the text may be in the pane (Herdr accepted it, or its answer
// was lost after the request was written), with the target's
// state_change_seq Herdr showed (0 when not known).
func (d *Deliverer) TypeWatched(ctx, hctx context.Context, target Agent, text string, lease Lease, watch bool, typed func(time.Time, uint64)) (string, error) {
	unlock := lease.Unlock
	// The pane id from this snapshot is workspace-scoped: if the target
	// moved to another workspace since, Herdr no longer accepts it as an
	// agent target and nothing crosses the boundary.
	afterEnter := d.cfg.Ports.PromptAfterEnter(hctx)
	text = TypedText(target.Kind, text)
	ev := d.openWatch(hctx, target, watch)
	defer ev.close()
	sent := time.Now()
	got, err := d.cfg.Herdr.Prompt(hctx, target.PaneID, text)
	accepted := time.Now()
	lease.Extend(d.leaseAfterPrompt(len(text)))
	if err != nil {
		if errors.Is(err, socket.ErrAfterWrite) {
			// The text may be in the pane: keep the lock past the Enter.
			d.ReleaseAfter(accepted, d.SubmitHold(), unlock)
			typed(accepted, 0)
		} else {
			unlock()
		}
		return "", d.cfg.Ports.HerdrFailed(CallPrompt, err)
	}
	// Herdr accepted the prompt: the operation deadline is spent here. Any
	// work after acceptance (a delivery-confirmation watch) runs on ctx
	// with a budget of its own, not on hctx.
	typed(accepted, got.Seq)
	d.cfg.Ports.Typed(target.PaneID, got)
	if err := d.checkOccupant(target, got); err != nil {
		d.ReleaseAfter(accepted, d.SubmitHold(), unlock)
		return "", err
	}
	delivery := DeliveryUnconfirmed
	if watch {
		delivery = d.confirm(ctx, afterEnter, target, got, len(text), ev)
	}
	d.release(delivery, accepted, d.holdAfterAnswer(afterEnter, sent, accepted), unlock)
	d.log.Debug("typed", "pane_id", target.PaneID, "bytes", len(text),
		"kind", got.Kind, "status_before", got.Status, "delivery", delivery, "took", time.Since(accepted))
	return delivery, nil
}

// Acquire waits for a target that cannot take a turn yet (still
// starting), then for its delivery lock — Herdr-side work of the send,
// bounded by the operation deadline — and makes the lease's last check
// before typing: a lease broken while this process was stopped is another
// delivery's turn now. It returns the target as last seen.
func (d *Deliverer) Acquire(hctx context.Context, target Agent) (Agent, Lease, error) {
	target, err := d.awaitReady(hctx, target)
	if err != nil {
		return Agent{}, nil, err
	}
	lease, err := d.lockDelivery(hctx, target)
	if err != nil {
		d.log.Info("delivery lock not acquired", "to", target.Name, "pane_id", target.PaneID, "err", err)
		return Agent{}, nil, err
	}
	if err := lease.Begin(UntilDeadline(hctx)); err != nil {
		lease.Unlock()
		d.log.Warn("delivery lease lost while this process was stopped; not typing", "pane_id", target.PaneID, "err", err)
		return Agent{}, nil, d.cfg.Ports.Fail(LeaseLost, err)
	}
	return target, lease, nil
}

// TakeTurn takes target for a turn of its own now, when it can take one:
// nothing held for it before, its delivery lock free, no blocker, the
// lease begun. Otherwise lease is nil and why says why the message is to
// be held. Messages held for the target already are looked at first
// without the lock (the blocker looks again under it, for one held
// meanwhile): a send right after another to a busy target thus never
// waits for the lock a courier's probe holds. target is updated to what
// Herdr shows now.
func (d *Deliverer) TakeTurn(hctx context.Context, target *Agent) (lease Lease, why string, err error) {
	if n, ok, err := d.cfg.Ports.Queued(LockKey(*target)); ok && err == nil && n > 0 {
		return nil, "messages held before", nil
	}
	lease, ok, err := d.tryLock(hctx, *target)
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, "lock busy", nil
	}
	why, err = d.blocker(hctx, target)
	if err != nil {
		lease.Unlock()
		return nil, "", err
	}
	if why != "" {
		lease.Unlock()
		return nil, why, nil
	}
	if err := lease.Begin(UntilDeadline(hctx)); err != nil {
		lease.Unlock()
		d.log.Warn("delivery lease lost while this process was stopped; holding", "pane_id", target.PaneID, "err", err)
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
func (d *Deliverer) release(_ string, accepted time.Time, hold time.Duration, unlock func()) {
	d.ReleaseAfter(accepted, hold, unlock)
}

// CheckPinned reads the target once more right before it is typed into,
// under its lock, and fails (nothing typed) unless it is still the
// occupant the message was accepted for: the same terminal, kind and
// agent session. An agent that exited leaves its name bound for a while
// (Herdr #4764), so the name alone may already be the next occupant's.
func (d *Deliverer) CheckPinned(ctx context.Context, target Agent) error {
	a, err := d.cfg.Herdr.GetAgent(ctx, target.PaneID)
	if err != nil {
		return d.probeError(err)
	}
	if target.TerminalID != "" && a.TerminalID != "" {
		a.Name = target.Name // the terminal decides: a rename alone is the same agent
	}
	if !SameOccupant(target, a) {
		d.log.Info("target's occupant changed before typing; nothing typed", "pane_id", target.PaneID,
			"want_terminal", target.TerminalID, "got_terminal", a.TerminalID, "want_kind", target.Kind, "got_kind", a.Kind)
		return d.cfg.Ports.Fail(PeerGone, nil)
	}
	return nil
}

// checkOccupant fails when the prompt reached another occupant of the
// target's pane than the one resolved; a rename of the same agent is
// logged and passes.
func (d *Deliverer) checkOccupant(target, got Agent) error {
	if !SameOccupant(target, got) {
		d.log.Warn("prompt reached a different occupant", "pane_id", target.PaneID, "want_name", target.Name, "got_name", got.Name,
			"want_terminal", target.TerminalID, "got_terminal", got.TerminalID, "want_kind", target.Kind, "got_kind", got.Kind)
		return d.cfg.Ports.Fail(Changed, nil)
	}
	if got.Name != target.Name {
		// The same agent renamed itself between agent.list and the
		// prompt: the message reached it.
		d.log.Info("target renamed during delivery", "pane_id", target.PaneID, "want_name", target.Name, "got_name", got.Name)
	}
	return nil
}

// SameOccupant reports whether the agent Herdr's prompt answer shows (got)
// is the one resolved (target): the same pane, the same terminal, and the
// same agent kind (a different agent started in that terminal replaces
// the occupant). A name change alone is a rename of the same agent. When
// Herdr reports no terminal id, the name is all there is to compare.
func SameOccupant(target, got Agent) bool {
	switch {
	case got.PaneID != target.PaneID:
		return false
	case !SameSession(SessionOf(target), got):
		return false
	case target.TerminalID != "" && got.TerminalID != "":
		return got.TerminalID == target.TerminalID && (target.Kind == "" || got.Kind == "" || got.Kind == target.Kind)
	}
	return got.Name == target.Name
}

// SameSession reports whether got is still in the agent session pinned
// (pinned "" when Herdr reported none at acceptance): a session reported
// then and another, or none, now is another occupant (an agent that
// exited, and the next one started in the same terminal).
func SameSession(pinned string, got Agent) bool {
	return pinned == "" || SessionOf(got) == pinned
}

// LockKey is the delivery lock's key of target: its terminal id, or
// "pane:" and its pane id when Herdr reports none. It is a copy: a lock
// may outlive the call, and the terminal id is part of a whole agent.list
// answer.
func LockKey(a Agent) string {
	if a.TerminalID != "" {
		return strings.Clone(a.TerminalID)
	}
	return "pane:" + a.PaneID
}

// blocker says why target cannot take a message as a turn of its own now
// ("" when it can): a message held for it already (FIFO), its state, a
// draft in its composer. The caller holds the target's lock; target is
// updated to what Herdr shows now.
func (d *Deliverer) blocker(ctx context.Context, target *Agent) (string, error) {
	n, ok, err := d.cfg.Ports.Queued(LockKey(*target))
	if ok && err != nil {
		return "", d.cfg.Ports.OutboxFailed(err)
	}
	if ok && n > 0 {
		return "messages held before", nil
	}
	a, err := d.cfg.Herdr.GetAgent(ctx, target.PaneID)
	if err != nil {
		return "", d.probeError(err)
	}
	if !SameOccupant(*target, a) {
		return "", d.cfg.Ports.Fail(PeerGone, nil)
	}
	a.Name, a.WorkspaceID = target.Name, target.WorkspaceID
	*target = a
	if !Takes(a) {
		return "state " + a.Status, nil
	}
	if why, held := d.cfg.Ports.HoldsTyping(ctx, a); held {
		return why, nil
	}
	return "", nil
}

// tryLock takes the target's delivery lock if it is free within
// tryLockWait; ok is false when another delivery holds it.
func (d *Deliverer) tryLock(ctx context.Context, target Agent) (Lease, bool, error) {
	if d.cfg.Locker == nil {
		return NoLease{}, true, nil
	}
	lctx, cancel := context.WithTimeout(ctx, tryLockWait)
	defer cancel()
	lease, err := d.cfg.Locker.Lock(lctx, LockKey(target), UntilDeadline(ctx))
	switch {
	case err == nil:
		return lease, true, nil
	case ctx.Err() != nil:
		return nil, false, d.cfg.Ports.Ended(ctx)
	case lctx.Err() != nil:
		return nil, false, nil
	}
	d.log.Error("delivery lock unusable; refusing to deliver unserialized", "err", err)
	return nil, false, d.cfg.Ports.Fail(LockUnusable, err)
}

// Takes reports whether Herdr shows a able to take a typed message as a
// turn of its own: ready ([Ready]) and at rest (idle or done).
func Takes(a Agent) bool {
	st := State(a.Status)
	return Ready(a) && (st == "idle" || st == "done")
}

// tryLockWait is how long a when-idle send tries for the target's lock:
// a lock held means a delivery is under way, and the target is about to
// be busy.
const tryLockWait = 30 * time.Millisecond
