package courier

import (
	"context"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
)

// Deliver runs the courier until ctx ends: it types the held messages of
// the outbox as their targets become ready, oldest first per target
// across every sender of the machine, one per turn, and gives the pending
// requests their outcomes. It serves the messages and requests this
// process accepted and those whose accepting process is gone. Its work is
// per target: one probe schedule per target and one status stream for
// all of them, whatever waits on them. Without an Outbox it only waits
// for ctx.
func (c *Courier) Deliver(ctx context.Context) error {
	if c.cfg.Outbox == nil {
		<-ctx.Done()
		return nil
	}
	if _, err := c.cfg.Outbox.Token(); err != nil {
		return err
	}
	r := &loop{c: c, targets: map[string]*waitTarget{}}
	r.waker = &paneWaker{c: c, wake: make(chan string, 16)}
	defer r.waker.stop()
	nextScan := time.Time{}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		if now := time.Now(); !now.Before(nextScan) {
			r.scan(now)
			nextScan = now.Add(scanEvery)
			r.waker.watch(ctx, r.panes())
		}
		wait := min(time.Until(nextScan), r.step(ctx))
		timer.Reset(max(wait, time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-c.kicks():
			c.kickMu.Lock()
			kicked := c.kicked
			c.kicked = nil
			c.kickMu.Unlock()
			if kicked[""] {
				nextScan = time.Time{}
				continue
			}
			for h := range kicked {
				r.refresh(h)
			}
			r.waker.watch(ctx, r.panes())
		case pane := <-r.waker.wake:
			r.wake(pane)
		case <-timer.C:
		}
	}
}

// DeliverDue serves once what is due for the agent of pane paneID, as a
// round of [Courier.Deliver] would, for a one-shot delivery (a command run
// on a status change of that pane): it types the oldest held message for
// it if it can take it now — whichever process accepted it: the target's
// delivery lock and the claim keep a message typed once — ending on the
// way those that expired or whose target is gone, and gives the pending
// requests to it that this courier follows (this process's, and those of
// processes that are gone) the outcome its probe shows. It returns
// whether anything still waits on that agent. Without an Outbox it does
// nothing.
func (c *Courier) DeliverDue(ctx context.Context, paneID string) (bool, error) {
	if c.cfg.Outbox == nil {
		return false, nil
	}
	if _, err := c.cfg.Outbox.Token(); err != nil {
		return false, err
	}
	now := time.Now()
	r := &loop{c: c, targets: map[string]*waitTarget{}, anyOwner: true, pruned: now}
	r.scan(now)
	waiting := false
	for _, t := range r.targets {
		if t.pane != paneID {
			continue
		}
		if _, keep := r.serve(ctx, t); keep {
			waiting = true
		}
	}
	return waiting, nil
}

// loop is the state of one Deliver loop: the targets it waits on.
type loop struct {
	c       *Courier
	targets map[string]*waitTarget // by target key hash
	waker   *paneWaker
	pruned  time.Time // the last prune of the store
	// anyOwner: serve held messages whoever accepted them (a one-shot
	// delivery), not only this process's and those of gone ones.
	anyOwner bool
}

// step serves every target that is due, and returns how long until the
// next one is.
func (r *loop) step(ctx context.Context) time.Duration {
	return serveDue(r.targets, func(t *waitTarget) *time.Time { return &t.due },
		func(t *waitTarget) (time.Duration, bool) { return r.serve(ctx, t) }, maxParallel)
}

// serve serves target t once: its oldest held message if it can take it,
// then its pending requests, from the probe the delivery made when it
// made one. It returns when to look again, and whether anything still
// waits on t.
func (r *loop) serve(ctx context.Context, t *waitTarget) (time.Duration, bool) {
	t.served = time.Now()
	next := r.c.poll()
	var obs *observation
	if t.held {
		d, keep, o := r.c.deliverNext(ctx, t)
		t.held, next, obs = keep, d, o
	}
	if len(t.reqs) > 0 {
		d := r.c.followRequests(ctx, t, obs)
		if t.held {
			d = min(d, next)
		}
		next = d
	}
	return next, t.held || len(t.reqs) > 0
}

// requestWakeGap is the least spacing of the probes a status event
// brings forward for a target with only requests waiting on it: its turn
// ending starts the reply grace (seconds), and a busy target's events
// (one per turn it starts and ends) then cost a probe each at most every
// gap.
const requestWakeGap = 250 * time.Millisecond

// wake makes the target of pane due now (a status change of it): at
// once when a message is held for it, else no sooner than requestWakeGap
// after its last probe.
func (r *loop) wake(pane string) {
	for _, t := range r.targets {
		if t.pane != pane {
			continue
		}
		at := time.Time{}
		if !t.held {
			at = t.served.Add(requestWakeGap)
		}
		if at.Before(t.due) {
			t.due = at
		}
	}
}

// panes are the panes of the targets the courier waits on.
func (r *loop) panes() []string {
	out := make([]string, 0, len(r.targets))
	for _, t := range r.targets {
		out = append(out, t.pane)
	}
	return out
}

// scan lists the outbox and brings the targets up to date: every target
// with a held message this courier serves or a pending request it
// follows (those of this process, of processes that are gone, and
// messages left being typed by one). A target already followed keeps its
// due time; a new one, or one with a newly held message, is due now.
// Long: one pass over the store's held messages and pending requests,
// each kind with its own rules, kept together so that both see one listing.
func (r *loop) scan(now time.Time) {
	c := r.c
	if now.Sub(r.pruned) >= pruneEvery {
		c.cfg.Outbox.Prune(now)
		r.pruned = now
	}
	ents, err := c.cfg.Outbox.List()
	if err != nil {
		c.log().Warn("outbox unreadable", "err", err)
		return
	}
	tok, _ := c.cfg.Outbox.Token()
	serves := r.servesFunc()
	type seen struct {
		held    *outbox.Entry // the first held message served
		heldIDs map[string]bool
		pending map[string]outbox.Entry
	}
	byTarget := map[string]*seen{}
	get := func(h string) *seen {
		s := byTarget[h]
		if s == nil {
			s = &seen{heldIDs: map[string]bool{}, pending: map[string]outbox.Entry{}}
			byTarget[h] = s
		}
		return s
	}
	for i := range ents {
		e := ents[i]
		switch {
		case e.Held():
			s := get(e.Target)
			s.heldIDs[e.ID] = true
			if s.held == nil && serves(e) {
				s.held = &ents[i]
			}
		case e.Pending():
			if serves(e) {
				get(e.Target).pending[e.ID] = e
			}
		}
	}
	for h, t := range r.targets {
		if byTarget[h] == nil {
			t.held, t.heldIDs = false, nil
			clear(t.reqs)
		}
	}
	for h, s := range byTarget {
		t := r.targets[h]
		if t == nil {
			if s.held == nil && len(s.pending) == 0 {
				continue
			}
			t = &waitTarget{hash: h, reqs: map[string]*watchedRequest{}}
		}
		if s.held != nil && !t.held {
			t.due = time.Time{}
			if t.pane == "" {
				m, err := c.cfg.Outbox.Read(*s.held)
				if err == nil {
					t.key, t.pane = m.TargetKey, m.PaneID
					if m.Owner != tok && !r.anyOwner {
						c.log().Info("serving a held message of a process that is gone", "id", m.ID, "pane_id", m.PaneID)
					}
				}
			}
		}
		t.held, t.heldIDs = s.held != nil && t.pane != "", s.heldIDs
		for id := range t.reqs {
			if _, ok := s.pending[id]; !ok {
				delete(t.reqs, id) // it has its outcome, or is gone
			}
		}
		for id, e := range s.pending {
			if t.reqs[id] != nil {
				continue
			}
			r, err := c.cfg.Outbox.Request(e)
			if err != nil || r.State != outbox.StatePending {
				continue
			}
			if t.pane == "" {
				t.key, t.pane = r.TargetKey, r.PaneID
			}
			t.reqs[id] = &watchedRequest{e: e, r: r}
		}
		if t.pane != "" && (t.held || len(t.reqs) > 0) {
			r.targets[h] = t
		}
	}
	for h, t := range r.targets {
		if !t.held && len(t.reqs) == 0 {
			delete(r.targets, h)
		}
	}
}

// servesFunc returns whether this courier serves entry e: this
// process's, one being typed (left by a typer that died, or typed now
// under its target's lock), one of a process that is gone, or any held
// message for a one-shot delivery. It asks once per owner.
func (r *loop) servesFunc() func(outbox.Entry) bool {
	tok, _ := r.c.cfg.Outbox.Token()
	alive := map[string]bool{}
	return func(e outbox.Entry) bool {
		if e.Owner == tok || e.State == outbox.StateTyping || r.anyOwner && e.Held() {
			return true
		}
		ok, seen := alive[e.Owner]
		if !seen {
			ok = r.c.cfg.Outbox.OwnerAlive(e.Owner)
			alive[e.Owner] = ok
		}
		return !ok
	}
}

// refresh brings the held messages of the target of key hash h up to
// date (a message was held for it), from that target's entries only.
func (r *loop) refresh(h string) {
	c := r.c
	ents, err := c.heldFor(h)
	if err != nil {
		c.log().Warn("outbox unreadable", "err", err)
		return
	}
	serves := r.servesFunc()
	ids := make(map[string]bool, len(ents))
	var first *outbox.Entry
	for i, e := range ents {
		ids[e.ID] = true
		if first == nil && serves(e) {
			first = &ents[i]
		}
	}
	t := r.targets[h]
	if t != nil {
		t.heldIDs = ids
	}
	if first == nil {
		if t != nil {
			t.held = false
		}
		return
	}
	if t == nil {
		m, err := c.cfg.Outbox.Read(*first)
		if err != nil {
			return
		}
		t = &waitTarget{hash: h, key: m.TargetKey, pane: m.PaneID, heldIDs: ids, reqs: map[string]*watchedRequest{}}
		r.targets[h] = t
	}
	if !t.held {
		t.held, t.due = true, time.Time{}
	}
}
