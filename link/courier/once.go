package courier

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
)

// OnceBudget bounds the Herdr work of one [Courier.DeliverOnce] target: the
// confirmation watch of what it types is capped to it, so that a one-shot
// pass (a plugin hook) ends within its own bound.
const OnceBudget = 4 * time.Second

// OnceReport is what one [Courier.DeliverOnce] pass did.
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

// ErrNoOutbox is returned by [Courier.DeliverOnce] without an Outbox.
var ErrNoOutbox = errors.New("no outbox: herdr-link keeps no held messages here (the lock directory is not private; the log said why)")

// DeliverOnce is one pass of the courier over what no running
// herdr-link process serves: for the agent of pane (every agent when
// pane is ""), when a message held for it or a pending request to it
// belongs to a process that is gone (or a typer that died left a claim),
// it serves that agent once with [Courier.DeliverDue] — the oldest held
// message typed if the agent can take it now, under its delivery lock
// and the outbox's claim, the requests to it given the outcome its probe
// shows — and returns. An agent that cannot take a turn is left for a
// later pass. With nothing of a gone process waiting it touches nothing
// but the outbox's listing: no owner file, no Herdr call.
//
// It is safe to run in many processes at once: one of them gets a
// target's lock, the others leave the target alone. The caller calls
// [deliver.Deliverer.Wait] before it exits.
func (c *Courier) DeliverOnce(ctx context.Context, pane string) (OnceReport, error) {
	var rep OnceReport
	if c.cfg.Outbox == nil {
		return rep, ErrNoOutbox
	}
	due, err := c.dueTargets(pane)
	if err != nil || len(due) == 0 {
		return rep, err
	}
	rep.Due = len(due)
	held := c.heldIDs(due)
	panes := map[string]bool{}
	for _, t := range due {
		panes[t.pane] = true
	}
	sem := make(chan struct{}, maxParallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for p := range panes {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if _, err := c.DeliverDue(ctx, p); err != nil {
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, id := range held {
		e, err := c.cfg.Outbox.Find(id)
		switch {
		case errors.Is(err, outbox.ErrNotFound):
			rep.Typed++
		case err != nil || e.Held():
		default:
			if m, err := c.cfg.Outbox.Read(e); err == nil && m.End == outbox.EndTyped {
				rep.Typed++
			} else {
				rep.Ended++
			}
		}
	}
	return rep, firstErr
}

// heldIDs are the ids of the messages held for the targets of due.
func (c *Courier) heldIDs(due map[string]*waitTarget) []string {
	ents, err := c.cfg.Outbox.List()
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

// dueTargets are the targets a one-shot pass serves: those with a held
// message or a pending request of a process that is gone, or a message
// left being typed by one, for the agent of pane (every agent when pane
// is ""). It reads one record per such target, and none when nothing of
// a gone process waits.
func (c *Courier) dueTargets(pane string) (map[string]*waitTarget, error) {
	ents, err := c.cfg.Outbox.List()
	if err != nil {
		return nil, err
	}
	alive := map[string]bool{}
	out := map[string]*waitTarget{}
	seen := map[string]bool{}
	for _, e := range ents {
		if !(e.Held() || e.Pending()) || seen[e.Target] {
			continue
		}
		if e.State != outbox.StateTyping {
			ok, known := alive[e.Owner]
			if !known {
				ok = c.cfg.Outbox.OwnerAlive(e.Owner)
				alive[e.Owner] = ok
			}
			if ok {
				continue
			}
		}
		key, paneID, ok := c.targetOf(e)
		if !ok {
			continue
		}
		seen[e.Target] = true
		if pane != "" && paneID != pane {
			continue
		}
		out[e.Target] = &waitTarget{hash: e.Target, key: key, pane: paneID}
	}
	return out, nil
}

// targetOf reads the target key and pane of a held message's or a
// pending request's record.
func (c *Courier) targetOf(e outbox.Entry) (key, pane string, ok bool) {
	if e.Pending() {
		r, err := c.cfg.Outbox.Request(e)
		return r.TargetKey, r.PaneID, err == nil
	}
	m, err := c.cfg.Outbox.Read(e)
	return m.TargetKey, m.PaneID, err == nil
}
