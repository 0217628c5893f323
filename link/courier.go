package link

import (
	"context"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
)

// Timing of the courier.
const (
	// DefaultCourierPoll is the spacing of the courier's probes of a
	// target it waits for, when no event woke it sooner.
	DefaultCourierPoll = 2 * time.Second
	// draftPoll is that spacing while the target's composer holds a
	// draft: clearing a draft changes no status, so no event says it.
	draftPoll = time.Second
	// scanEvery is the spacing of the courier's scans of the outbox for
	// messages whose accepting process is gone.
	scanEvery = 2 * time.Second
	// pruneEvery is the spacing of the courier's prunes of the store.
	pruneEvery = time.Minute
	// courierLockWait is how long the courier tries for a target's lock.
	courierLockWait = 50 * time.Millisecond
)

func (l *Link) kicks() chan struct{} {
	l.kickOnce.Do(func() { l.kick = make(chan struct{}, 1) })
	return l.kick
}

// kickCourier wakes the courier: a message was held for the targets of
// key hashes targets (none: the courier scans the whole store).
func (l *Link) kickCourier(targets ...string) {
	l.kickMu.Lock()
	if l.kicked == nil {
		l.kicked = map[string]bool{}
	}
	if len(targets) == 0 {
		l.kicked[""] = true
	}
	for _, h := range targets {
		l.kicked[h] = true
	}
	l.kickMu.Unlock()
	select {
	case l.kicks() <- struct{}{}:
	default:
	}
}

func (l *Link) courierPoll() time.Duration {
	if l.cfg.CourierPoll > 0 {
		return l.cfg.CourierPoll
	}
	return DefaultCourierPoll
}

// courierTarget is a target the courier waits for: everything waiting
// on it (its held messages, the pending requests it has to answer) is
// served on one schedule, from one observation of it per round.
type courierTarget struct {
	hash string // the target's key hash in the outbox
	key  string
	pane string
	due  time.Time
	// held: the last scan listed held messages of it this courier serves.
	held bool
	// heldIDs are the ids of every message held for it (any sender) at
	// the last scan: a request whose message is among them is not typed
	// yet.
	heldIDs map[string]bool
	// reqs are the pending requests to it this courier follows, by id.
	reqs map[string]*watchedRequest
	// served is when it was last served.
	served time.Time
	// noComposer: since when the target, ready to Herdr, has shown no
	// composer (zero: it shows one, or its kind has no rules).
	noComposer time.Time
}

// Deliver runs the courier until ctx ends: it types the held messages of
// the outbox as their targets become ready, oldest first per target
// across every sender of the machine, one per turn, and gives the pending
// requests their outcomes. It serves the messages and requests this
// process accepted and those whose accepting process is gone. Its work is
// per target: one probe schedule per target and one status stream for
// all of them, whatever waits on them. Without an Outbox it only waits
// for ctx.
func (l *Link) Deliver(ctx context.Context) error {
	if l.cfg.Outbox == nil {
		<-ctx.Done()
		return nil
	}
	if _, err := l.cfg.Outbox.Token(); err != nil {
		return err
	}
	c := &courier{l: l, targets: map[string]*courierTarget{}}
	c.waker = &paneWaker{l: l, wake: make(chan string, 16)}
	defer c.waker.stop()
	nextScan := time.Time{}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		if now := time.Now(); !now.Before(nextScan) {
			c.scan(now)
			nextScan = now.Add(scanEvery)
			c.waker.watch(ctx, c.panes())
		}
		wait := min(time.Until(nextScan), c.step(ctx))
		timer.Reset(max(wait, time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-l.kicks():
			l.kickMu.Lock()
			kicked := l.kicked
			l.kicked = nil
			l.kickMu.Unlock()
			if kicked[""] {
				nextScan = time.Time{}
				continue
			}
			for h := range kicked {
				c.refresh(h)
			}
			c.waker.watch(ctx, c.panes())
		case pane := <-c.waker.wake:
			c.wake(pane)
		case <-timer.C:
		}
	}
}

// DeliverDue serves once what is due for the agent of pane paneID, as a
// round of [Link.Deliver] would, for a one-shot delivery (a command run
// on a status change of that pane): it types the oldest held message for
// it if it can take it now — whichever process accepted it: the target's
// delivery lock and the claim keep a message typed once — ending on the
// way those that expired or whose target is gone, and gives the pending
// requests to it that this courier follows (this process's, and those of
// processes that are gone) the outcome its probe shows. It returns
// whether anything still waits on that agent. Without an Outbox it does
// nothing.
func (l *Link) DeliverDue(ctx context.Context, paneID string) (bool, error) {
	if l.cfg.Outbox == nil {
		return false, nil
	}
	if _, err := l.cfg.Outbox.Token(); err != nil {
		return false, err
	}
	now := time.Now()
	c := &courier{l: l, targets: map[string]*courierTarget{}, anyOwner: true, pruned: now}
	c.scan(now)
	waiting := false
	for _, t := range c.targets {
		if t.pane != paneID {
			continue
		}
		if _, keep := c.serve(ctx, t); keep {
			waiting = true
		}
	}
	return waiting, nil
}

// courier is the state of one Deliver loop: the targets it waits on.
type courier struct {
	l       *Link
	targets map[string]*courierTarget // by target key hash
	waker   *paneWaker
	pruned  time.Time // the last prune of the store
	// anyOwner: serve held messages whoever accepted them (a one-shot
	// delivery), not only this process's and those of gone ones.
	anyOwner bool
}

// step serves every target that is due, and returns how long until the
// next one is.
func (c *courier) step(ctx context.Context) time.Duration {
	return serveDue(c.targets, func(t *courierTarget) *time.Time { return &t.due },
		func(t *courierTarget) (time.Duration, bool) { return c.serve(ctx, t) }, courierParallel)
}

// serve serves target t once: its oldest held message if it can take it,
// then its pending requests, from the probe the delivery made when it
// made one. It returns when to look again, and whether anything still
// waits on t.
func (c *courier) serve(ctx context.Context, t *courierTarget) (time.Duration, bool) {
	t.served = time.Now()
	next := c.l.courierPoll()
	var obs *observation
	if t.held {
		d, keep, o := c.l.deliverNext(ctx, t)
		t.held, next, obs = keep, d, o
	}
	if len(t.reqs) > 0 {
		d := c.l.followRequests(ctx, t, obs)
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
func (c *courier) wake(pane string) {
	for _, t := range c.targets {
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
func (c *courier) panes() []string {
	out := make([]string, 0, len(c.targets))
	for _, t := range c.targets {
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
func (c *courier) scan(now time.Time) {
	l := c.l
	if now.Sub(c.pruned) >= pruneEvery {
		l.cfg.Outbox.Prune(now)
		c.pruned = now
	}
	ents, err := l.cfg.Outbox.List()
	if err != nil {
		l.log().Warn("outbox unreadable", "err", err)
		return
	}
	tok, _ := l.cfg.Outbox.Token()
	serves := c.servesFunc()
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
	for h, t := range c.targets {
		if byTarget[h] == nil {
			t.held, t.heldIDs = false, nil
			clear(t.reqs)
		}
	}
	for h, s := range byTarget {
		t := c.targets[h]
		if t == nil {
			if s.held == nil && len(s.pending) == 0 {
				continue
			}
			t = &courierTarget{hash: h, reqs: map[string]*watchedRequest{}}
		}
		if s.held != nil && !t.held {
			t.due = time.Time{}
			if t.pane == "" {
				m, err := l.cfg.Outbox.Read(*s.held)
				if err == nil {
					t.key, t.pane = m.TargetKey, m.PaneID
					if m.Owner != tok && !c.anyOwner {
						l.log().Info("serving a held message of a process that is gone", "id", m.ID, "pane_id", m.PaneID)
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
			r, err := l.cfg.Outbox.Request(e)
			if err != nil || r.State != outbox.StatePending {
				continue
			}
			if t.pane == "" {
				t.key, t.pane = r.TargetKey, r.PaneID
			}
			t.reqs[id] = &watchedRequest{e: e, r: r}
		}
		if t.pane != "" && (t.held || len(t.reqs) > 0) {
			c.targets[h] = t
		}
	}
	for h, t := range c.targets {
		if !t.held && len(t.reqs) == 0 {
			delete(c.targets, h)
		}
	}
}

// servesFunc returns whether this courier serves entry e: this
// process's, one being typed (left by a typer that died, or typed now
// under its target's lock), one of a process that is gone, or any held
// message for a one-shot delivery. It asks once per owner.
func (c *courier) servesFunc() func(outbox.Entry) bool {
	tok, _ := c.l.cfg.Outbox.Token()
	alive := map[string]bool{}
	return func(e outbox.Entry) bool {
		if e.Owner == tok || e.State == outbox.StateTyping || c.anyOwner && e.Held() {
			return true
		}
		ok, seen := alive[e.Owner]
		if !seen {
			ok = c.l.cfg.Outbox.OwnerAlive(e.Owner)
			alive[e.Owner] = ok
		}
		return !ok
	}
}

// refresh brings the held messages of the target of key hash h up to
// date (a message was held for it), from that target's entries only.
func (c *courier) refresh(h string) {
	l := c.l
	ents, err := l.heldFor(h)
	if err != nil {
		l.log().Warn("outbox unreadable", "err", err)
		return
	}
	serves := c.servesFunc()
	ids := make(map[string]bool, len(ents))
	var first *outbox.Entry
	for i, e := range ents {
		ids[e.ID] = true
		if first == nil && serves(e) {
			first = &ents[i]
		}
	}
	t := c.targets[h]
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
		m, err := l.cfg.Outbox.Read(*first)
		if err != nil {
			return
		}
		t = &courierTarget{hash: h, key: m.TargetKey, pane: m.PaneID, heldIDs: ids, reqs: map[string]*watchedRequest{}}
		c.targets[h] = t
	}
	if !t.held {
		t.held, t.due = true, time.Time{}
	}
}
