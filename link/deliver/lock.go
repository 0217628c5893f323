package deliver

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/socket"
)

// FileLocks adapts a [panelock.Locker] (the machine-wide file locks) to
// Locker.
func FileLocks(pl *panelock.Locker) Locker { return fileLocks{pl} }

type fileLocks struct{ pl *panelock.Locker }

func (f fileLocks) Lock(ctx context.Context, key string, d time.Duration) (Lease, error) {
	le, err := f.pl.Lock(ctx, key, d)
	if err != nil {
		return nil, err
	}
	return le, nil
}

// NoLease is the lease of a delivery without a Locker.
type NoLease struct{}

func (NoLease) Begin(time.Duration) error { return nil }
func (NoLease) Extend(time.Duration)      {}
func (NoLease) Unlock()                   {}

// promptReserve is kept from a call's deadline for the prompt itself
// when waiting for the lock or for the target's readiness.
const promptReserve = time.Second

// errLockWait: the wait for the delivery lock ended before the lock was
// free; nothing was sent.
var errLockWait = errors.New("waiting for the delivery lock: deadline")

// waitBudget is how long a send may wait (for the lock, for readiness)
// within ctx: its deadline less promptReserve (half of what is left when
// that is under two seconds), or LockWait (10 s) without a deadline.
func (d *Deliverer) waitBudget(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		return max(left-min(promptReserve, left/2), 0)
	}
	if d.cfg.LockWait > 0 {
		return d.cfg.LockWait
	}
	return DefaultLockWait
}

// lockDelivery takes the target's delivery lock, waiting at most
// waitBudget. A lock that cannot be taken for another reason than
// waiting (an unsafe lock directory) fails the send: a delivery without
// serialization could merge with another one.
func (d *Deliverer) lockDelivery(ctx context.Context, target Agent) (Lease, error) {
	if d.cfg.Locker == nil {
		return NoLease{}, nil
	}
	// The terminal id follows the pane across moves; a Herdr that does not
	// report it still gets one lock per pane id. The key is a copy: a lock
	// may outlive the call (SubmitHold), and the terminal id is part of a
	// whole agent.list answer (agentList.SharesAnswer).
	key := strings.Clone(target.TerminalID)
	if key == "" {
		key = "pane:" + target.PaneID
	}
	lctx, cancel := context.WithTimeout(ctx, d.waitBudget(ctx))
	defer cancel()
	lease, err := d.cfg.Locker.Lock(lctx, key, UntilDeadline(ctx))
	switch {
	case err == nil:
		return lease, nil
	case ctx.Err() != nil:
		return nil, d.cfg.Ports.Ended(ctx)
	case lctx.Err() != nil:
		return nil, d.cfg.Ports.Fail(LockBusy, errLockWait)
	}
	d.log.Error("delivery lock unusable; refusing to deliver unserialized", "err", err)
	return nil, d.cfg.Ports.Fail(LockUnusable, err)
}

// UntilDeadline is what is left of ctx's deadline (DefaultLockWait plus
// promptReserve without one).
func UntilDeadline(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return max(time.Until(dl), 0)
	}
	return DefaultLockWait + promptReserve
}

// leaseAfterPrompt is how long a delivery keeps its lease once Herdr
// answered: the hold, and in confirm mode the watch's budget.
func (d *Deliverer) leaseAfterPrompt(textBytes int) time.Duration {
	h := d.SubmitHold()
	if d.cfg.Confirm {
		h += d.cfg.Budget(textBytes)
	}
	return h
}

// Ready reports whether Herdr shows a takes a turn: not a managed launch
// still pending, and not a just-detected agent whose state Herdr has not
// classified yet (status unknown: its input box may not be up, so typed
// text would wait in it or be read raw).
func Ready(a Agent) bool { return !a.LaunchPending && a.Status != "unknown" }

// errNotReady: the target did not become ready within the call.
var errNotReady = errors.New("the target agent did not become ready in time")

// awaitReady returns target once Herdr shows it ready ([Ready]), probing
// agent.get every 50 ms for at most waitBudget; nothing is typed before.
func (d *Deliverer) awaitReady(ctx context.Context, target Agent) (Agent, error) {
	if Ready(target) {
		return target, nil
	}
	wctx, cancel := context.WithTimeout(ctx, d.waitBudget(ctx))
	defer cancel()
	t := time.NewTimer(confirmPoll)
	defer t.Stop()
	for {
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return Agent{}, d.cfg.Ports.Ended(ctx)
			}
			d.log.Info("target not ready within the call", "pane_id", target.PaneID, "status", target.Status, "launch_pending", target.LaunchPending)
			return Agent{}, d.cfg.Ports.Fail(NotReady, errNotReady)
		case <-t.C:
		}
		a, err := d.cfg.Herdr.GetAgent(wctx, target.PaneID)
		switch {
		case err != nil && wctx.Err() != nil:
			continue // the wait's end, reported above
		case err != nil:
			return Agent{}, d.probeError(err)
		case target.TerminalID != "" && a.TerminalID != target.TerminalID, a.Kind != target.Kind && target.Kind != "":
			// Another occupant: the agent that was named is gone.
			return Agent{}, d.cfg.Ports.Fail(PeerGone, nil)
		case Ready(a):
			a.Name, a.WorkspaceID = target.Name, target.WorkspaceID
			return a, nil
		}
		t.Reset(confirmPoll)
	}
}

// probeError maps a failed readiness probe: nothing was typed, so never
// "maybe delivered"; a target gone meanwhile is PEER_NOT_FOUND.
func (d *Deliverer) probeError(err error) error {
	if errors.Is(err, socket.ErrAgentNotFound) {
		d.log.Info("target gone while waiting for it to be ready", "err", err)
		return d.cfg.Ports.Fail(PeerGone, err)
	}
	return d.cfg.Ports.HerdrFailed(CallProbe, err)
}
