package link

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
)

// OnceBudget bounds the Herdr work of one [Link.DeliverOnce] target: the
// confirmation watch of what it types is capped to it, so that a one-shot
// pass (a plugin hook) ends within its own bound.
const OnceBudget = 4 * time.Second

// OnceReport is what one [Link.DeliverOnce] pass did.
type OnceReport struct {
	// Due is how many targets had held messages this pass served
	// (messages of processes that are gone, or left claimed by one).
	Due int
	// Typed is how many of their messages were typed by the end of the
	// pass (by it, or by another process at the same time); a notice
	// batch counts each notice.
	Typed int
	// Ended is how many ended untyped (expired, target gone, or claimed
	// by a typer that died).
	Ended int
}

// ErrNoOutbox is returned by [Link.DeliverOnce] without an Outbox.
var ErrNoOutbox = errors.New("no outbox: herdr-link keeps no held messages here (the lock directory is not private; the log said why)")

// DeliverOnce is one pass of the courier: for every target with held
// messages that no running herdr-link process serves (their accepting
// process is gone, or a typer that died left one claimed), restricted to
// the agent of pane unless pane is "", it types the oldest one if the
// target can take it now, under the target's delivery lock and the
// outbox's claim, exactly as the courier does, and returns. Targets
// that cannot take a turn are left for a later pass. Messages of running
// processes are theirs to deliver. With nothing due it makes no Herdr
// call at all.
//
// It is safe to run in many processes at once: one of them gets a
// target's lock, the others leave the target alone. The caller calls
// [Link.Wait] before it exits.
func (l *Link) DeliverOnce(ctx context.Context, pane string) (OnceReport, error) {
	var rep OnceReport
	if l.Outbox == nil {
		return rep, ErrNoOutbox
	}
	due, err := l.dueTargets(pane)
	if err != nil || len(due) == 0 {
		return rep, err
	}
	// Notices this pass writes (a held message that expired) need an
	// owner; it is gone when the process exits, and the next pass serves
	// them.
	if _, err := l.Outbox.Token(); err != nil {
		return rep, err
	}
	rep.Due = len(due)
	held := l.heldIDs(due)
	serveDue(due, func(t *courierTarget) *time.Time { return &t.due },
		func(t *courierTarget) (time.Duration, bool) {
			l.deliverNext(ctx, t)
			return 0, false
		}, courierParallel)
	for _, id := range held {
		e, err := l.Outbox.Find(id)
		switch {
		case errors.Is(err, outbox.ErrNotFound):
			rep.Typed++
		case err != nil || e.Held():
		default:
			if m, err := l.Outbox.Read(e); err == nil && m.End == outbox.EndTyped {
				rep.Typed++
			} else {
				rep.Ended++
			}
		}
	}
	return rep, nil
}

// heldIDs are the ids of the messages held for the targets of due.
func (l *Link) heldIDs(due map[string]*courierTarget) []string {
	ents, err := l.Outbox.List()
	if err != nil {
		return nil
	}
	var ids []string
	for _, e := range ents {
		if e.Held() && due[e.Target] != nil {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

// dueTargets are the targets with held messages a one-shot pass serves:
// those whose accepting process is gone, or left being typed by one,
// for the agent of pane (every agent when pane is ""). It reads one
// message per target, and none when nothing is held.
func (l *Link) dueTargets(pane string) (map[string]*courierTarget, error) {
	ents, err := l.Outbox.List()
	if err != nil {
		return nil, err
	}
	alive := map[string]bool{}
	out := map[string]*courierTarget{}
	seen := map[string]bool{}
	for _, e := range ents {
		if !e.Held() || seen[e.Target] {
			continue
		}
		if e.State != outbox.StateTyping {
			ok, known := alive[e.Owner]
			if !known {
				ok = l.Outbox.OwnerAlive(e.Owner)
				alive[e.Owner] = ok
			}
			if ok {
				continue
			}
		}
		m, err := l.Outbox.Read(e)
		if err != nil {
			continue
		}
		seen[e.Target] = true
		if pane != "" && m.PaneID != pane {
			continue
		}
		out[e.Target] = &courierTarget{hash: e.Target, key: m.TargetKey, pane: m.PaneID}
	}
	return out, nil
}
