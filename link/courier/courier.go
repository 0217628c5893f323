package courier

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link/deliver"
)

// Config is what a Courier is made of. Herdr, Deliverer and Ports are
// required; Outbox, when nil, leaves a Courier nothing to serve.
type Config struct {
	// Herdr is probed for the targets' states; a [deliver.PaneWatcher]
	// among them wakes the courier on their status changes.
	Herdr deliver.Herdr
	// Deliverer types one delivery to one target.
	Deliverer *deliver.Deliverer
	// Ports is what the courier needs of the protocol above it.
	Ports Ports
	// Outbox holds the messages and requests the courier serves.
	Outbox *outbox.Store
	// Locker is the delivery lock a held message is typed under (none
	// when nil).
	Locker deliver.Locker
	Logger *slog.Logger
	// Confirm: a direct delivery is watched for its submission.
	Confirm bool
	// CallTimeout bounds each Herdr operation.
	CallTimeout time.Duration
	// Now is the clock of the records; time.Now when nil.
	Now func() time.Time
	// HoldFor, Poll, ReplyGrace, RequestTTL and ProgressEvery are their
	// defaults (DefaultHoldFor, ...) when zero.
	HoldFor, Poll, ReplyGrace, RequestTTL, ProgressEvery time.Duration
	// NoNotices turns off the notices typed into a sender's pane.
	NoNotices bool
	// CrashAt, when set, is called at each step of a held delivery.
	CrashAt func(step string)
}

// Ports is what the courier needs of the protocol above it: the errors a
// caller sees, and what a target's screen shows.
type Ports interface {
	// Fail is the error of a courier failure; cause may be nil.
	Fail(why Failure, cause error) error
	// OutboxFailed is the error of an outbox that refused a record.
	OutboxFailed(err error) error
	// Ended is the error of a caller's context that ended.
	Ended(ctx context.Context) error
	// TypedMaybe reports whether a failed delivery may have typed its text.
	TypedMaybe(err error) bool
	// Composer says what a's screen shows of its composer: why it keeps
	// a message from being typed (a draft, a picker; "" when nothing
	// does), and whether a kind whose composer is read shows none.
	Composer(ctx context.Context, a deliver.Agent) (hold string, none bool)
}

// Failure is why the courier failed a caller, for [Ports.Fail].
type Failure int

const (
	// NoOutbox: a message must be held, and there is no outbox.
	NoOutbox Failure = iota
	// NoRequest: the id is not one of the caller's requests.
	NoRequest
)

// Courier serves the outbox: it holds the messages a target cannot take
// yet and types them once it can, keeps the ledger of requests and gives
// them their outcomes, and waits for them. It is safe for concurrent use.
type Courier struct {
	cfg Config
	d   *deliver.Deliverer

	// kick wakes the Deliver loop (a message was held). kicked are the
	// target key hashes of the messages held since its last wake (""
	// for a whole scan).
	kickOnce sync.Once
	kick     chan struct{}
	kickMu   sync.Mutex
	kicked   map[string]bool

	// typedComp: the completion_seq Herdr showed when this process typed
	// a message, by pane and state_change_seq (see completion.go).
	compMu    sync.Mutex
	typedComp map[typedAt]uint64
}

// New makes a Courier of cfg.
func New(cfg Config) *Courier {
	return &Courier{cfg: cfg, d: cfg.Deliverer}
}

func (c *Courier) log() *slog.Logger {
	if c.cfg.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.cfg.Logger
}

func (c *Courier) now() time.Time {
	if c.cfg.Now != nil {
		return c.cfg.Now()
	}
	return time.Now()
}

// bound gives ctx the operation deadline (an earlier deadline of ctx
// stays).
func (c *Courier) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.cfg.CallTimeout)
}

// Timing of the courier.
const (
	// DefaultPoll is the spacing of the courier's probes of a
	// target it waits for, when no event woke it sooner.
	DefaultPoll = 2 * time.Second
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

func (c *Courier) kicks() chan struct{} {
	c.kickOnce.Do(func() { c.kick = make(chan struct{}, 1) })
	return c.kick
}

// kickCourier wakes the courier: a message was held for the targets of
// key hashes targets (none: the courier scans the whole store).
func (c *Courier) kickCourier(targets ...string) {
	c.kickMu.Lock()
	if c.kicked == nil {
		c.kicked = map[string]bool{}
	}
	if len(targets) == 0 {
		c.kicked[""] = true
	}
	for _, h := range targets {
		c.kicked[h] = true
	}
	c.kickMu.Unlock()
	select {
	case c.kicks() <- struct{}{}:
	default:
	}
}

func (c *Courier) courierPoll() time.Duration {
	if c.cfg.Poll > 0 {
		return c.cfg.Poll
	}
	return DefaultPoll
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
func (c *Courier) Deliver(ctx context.Context) error {
	if c.cfg.Outbox == nil {
		<-ctx.Done()
		return nil
	}
	if _, err := c.cfg.Outbox.Token(); err != nil {
		return err
	}
	r := &loop{c: c, targets: map[string]*courierTarget{}}
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
	r := &loop{c: c, targets: map[string]*courierTarget{}, anyOwner: true, pruned: now}
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
	targets map[string]*courierTarget // by target key hash
	waker   *paneWaker
	pruned  time.Time // the last prune of the store
	// anyOwner: serve held messages whoever accepted them (a one-shot
	// delivery), not only this process's and those of gone ones.
	anyOwner bool
}

// step serves every target that is due, and returns how long until the
// next one is.
func (r *loop) step(ctx context.Context) time.Duration {
	return serveDue(r.targets, func(t *courierTarget) *time.Time { return &t.due },
		func(t *courierTarget) (time.Duration, bool) { return r.serve(ctx, t) }, courierParallel)
}

// serve serves target t once: its oldest held message if it can take it,
// then its pending requests, from the probe the delivery made when it
// made one. It returns when to look again, and whether anything still
// waits on t.
func (r *loop) serve(ctx context.Context, t *courierTarget) (time.Duration, bool) {
	t.served = time.Now()
	next := r.c.courierPoll()
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
			t = &courierTarget{hash: h, reqs: map[string]*watchedRequest{}}
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
		t = &courierTarget{hash: h, key: m.TargetKey, pane: m.PaneID, heldIDs: ids, reqs: map[string]*watchedRequest{}}
		r.targets[h] = t
	}
	if !t.held {
		t.held, t.due = true, time.Time{}
	}
}
