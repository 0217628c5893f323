package link

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
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

// PaneWatcher is implemented by a Herdr that streams agent status
// changes (events.subscribe); the courier then wakes on them instead of
// waiting for its next probe.
type PaneWatcher interface {
	// WatchPanes streams the status changes of the agents of paneIDs.
	WatchPanes(ctx context.Context, paneIDs []string) (PaneEvents, error)
}

// PaneEvents is an open stream of status changes.
type PaneEvents interface {
	// Next waits for the next change and returns its pane id.
	Next(ctx context.Context) (string, error)
	// Close ends the stream.
	Close() error
}

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
	if l.CourierPoll > 0 {
		return l.CourierPoll
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
	if l.Outbox == nil {
		<-ctx.Done()
		return nil
	}
	if _, err := l.Outbox.Token(); err != nil {
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
	if l.Outbox == nil {
		return false, nil
	}
	if _, err := l.Outbox.Token(); err != nil {
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
func (c *courier) scan(now time.Time) {
	l := c.l
	if now.Sub(c.pruned) >= pruneEvery {
		l.Outbox.Prune(now)
		c.pruned = now
	}
	ents, err := l.Outbox.List()
	if err != nil {
		l.log().Warn("outbox unreadable", "err", err)
		return
	}
	tok, _ := l.Outbox.Token()
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
				m, err := l.Outbox.Read(*s.held)
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
			r, err := l.Outbox.Request(e)
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
	tok, _ := c.l.Outbox.Token()
	alive := map[string]bool{}
	return func(e outbox.Entry) bool {
		if e.Owner == tok || e.State == outbox.StateTyping || c.anyOwner && e.Held() {
			return true
		}
		ok, seen := alive[e.Owner]
		if !seen {
			ok = c.l.Outbox.OwnerAlive(e.Owner)
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
		m, err := l.Outbox.Read(*first)
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

// heldFor returns the messages held or being typed for the target of key
// hash h, oldest first (the store's index: not a listing of the whole
// store).
func (l *Link) heldFor(h string) ([]outbox.Entry, error) {
	return l.Outbox.ListForTarget(h)
}

// deliverNext types the oldest held message for t if t can take it now.
// It returns when to look again, whether t still has messages, and what
// its probe of t saw when it probed and typed nothing (nil otherwise: an
// observation made before a delivery says nothing of the turn it
// starts).
func (l *Link) deliverNext(ctx context.Context, t *courierTarget) (time.Duration, bool, *observation) {
	poll := l.courierPoll()
	var lease Lease = noLease{}
	if l.Locker != nil {
		lctx, cancel := context.WithTimeout(ctx, courierLockWait)
		le, err := l.Locker.Lock(lctx, t.key, l.callTimeout())
		cancel()
		if err != nil {
			// Another delivery is under way (or no lock can be had: the
			// log of the send said why); look again at its end.
			return poll, true, nil
		}
		lease = le
	}
	m, ok := l.oldestHeld(t)
	if !ok {
		lease.Unlock()
		return 0, false, nil
	}
	obs, next, keep, ready := l.probeHeld(ctx, t, m)
	if !ready {
		lease.Unlock()
		return next, keep, &obs
	}
	a := obs.a
	batch := l.claim(t, m)
	if len(batch) == 0 {
		lease.Unlock()
		return poll, true, nil
	}
	l.crash("claimed")
	// A delivery once begun is not cut short by the courier's end: the
	// operation deadline and the watch's budget bound it.
	ctx = context.WithoutCancel(ctx)
	hctx, cancel := l.bound(ctx)
	defer cancel()
	if err := lease.Begin(untilDeadline(hctx)); err != nil {
		// Broken while this process was stopped: another delivery's turn.
		// The claim stays on disk, as a typer that died would leave it:
		// the message is never typed twice.
		lease.Unlock()
		for _, m := range batch {
			_ = l.Outbox.End(m, outbox.EndMaybeDelivered, l.now())
		}
		return poll, true, nil
	}
	a.Name = m.To
	var text strings.Builder
	for _, m := range batch {
		text.WriteString(m.Text)
	}
	// The lock is released only once the outcome is on disk: a courier
	// that took it between the release and the record would find the
	// claim and end the message as may-have-been-delivered.
	sl := &settleFirst{Lease: lease}
	d, err := l.typeHeld(ctx, hctx, a, m.ID, text.String(), sl)
	for _, m := range batch {
		l.settle(m, d, err)
	}
	sl.settled()
	return poll, true, nil
}

// claim claims m, and when it is a notice every other notice held for t
// with it (several notices due to one agent are one turn). It returns
// what it claimed.
func (l *Link) claim(t *courierTarget, m outbox.Message) []outbox.Message {
	if err := l.Outbox.Claim(&m); err != nil {
		return nil
	}
	batch := []outbox.Message{m}
	if !m.Notice {
		return batch
	}
	ents, err := l.heldFor(t.hash)
	if err != nil {
		return batch
	}
	for _, e := range ents {
		if e.State != outbox.StateHeld || e.ID == m.ID {
			continue
		}
		n, err := l.Outbox.Read(e)
		if err != nil || !n.Notice || !l.now().Before(n.Expires) {
			continue
		}
		if l.Outbox.Claim(&n) == nil {
			batch = append(batch, n)
		}
	}
	return batch
}

// settle records the outcome of typing the held message m.
func (l *Link) settle(m outbox.Message, d string, err error) {
	switch {
	case err == nil && d == DeliveryNotSubmitted:
		// Typed, and its text is still in the target's composer: not
		// delivered, and never typed again (it would join the unsent
		// text). Its sender learns of it.
		l.crash("typed")
		if err := l.Outbox.End(m, outbox.EndNotSubmitted, l.now()); err != nil {
			l.log().Warn("outbox: unsubmitted message not recorded", "id", m.ID, "err", err)
		}
		l.log().Warn("held message typed but not submitted: its text is still in the target's composer; it is not typed again",
			"id", m.ID, "to", m.To, "pane_id", m.PaneID)
		l.tellNotSubmitted(m)
	case err == nil && m.Notice:
		// A notice leaves a record that it was typed: whoever ends its
		// request again after a crash must not write it a second time.
		l.crash("typed")
		if err := l.Outbox.End(m, outbox.EndTyped, l.now()); err != nil {
			l.log().Warn("outbox: typed notice not recorded", "id", m.ID, "err", err)
		}
	case err == nil:
		l.crash("typed")
		if err := l.Outbox.Done(m); err != nil {
			l.log().Warn("outbox: typed message not removed", "id", m.ID, "err", err)
		}
		l.log().Debug("held message delivered", "id", m.ID, "to", m.To, "pane_id", m.PaneID, "delivery", d,
			"held_for", time.Since(m.Accepted))
	case typedMaybe(err):
		_ = l.Outbox.End(m, outbox.EndMaybeDelivered, l.now())
		l.log().Warn("held message may have been delivered", "id", m.ID, "pane_id", m.PaneID, "err", err)
	case errors.Is(err, ErrPeerNotFound):
		_ = l.Outbox.End(m, outbox.EndGone, l.now())
	default:
		// Herdr refused before typing (the target became blocked, say):
		// nothing was typed, the message waits on.
		if uerr := l.Outbox.Unclaim(&m); uerr != nil {
			_ = l.Outbox.End(m, outbox.EndMaybeDelivered, l.now())
		}
		l.log().Debug("held message not typed yet", "id", m.ID, "pane_id", m.PaneID, "err", err)
	}
}

// typeHeld types a held message: always watched for its submission, so
// that the lock is kept until the turn it starts shows, and the next
// held message waits for that turn to end.
func (l *Link) typeHeld(ctx, hctx context.Context, target Agent, id, text string, lease Lease) (string, error) {
	return l.typeWatched(ctx, hctx, target, text, lease, true, func(at time.Time, seq uint64) { l.requestTyped(id, at, seq) })
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

// oldestHeld returns the oldest message held for t, by any sender, ending
// on the way those that expired and those a typer that died left claimed.
// The caller holds t's lock.
func (l *Link) oldestHeld(t *courierTarget) (outbox.Message, bool) {
	ents, err := l.heldFor(t.hash)
	if err != nil {
		return outbox.Message{}, false
	}
	now := l.now()
	for _, e := range ents {
		m, err := l.Outbox.Read(e)
		if err != nil {
			continue
		}
		switch {
		case m.State == outbox.StateTyping:
			l.log().Warn("a held message was being typed by a process that is gone: it may have been delivered, it is not typed again", "id", m.ID, "pane_id", m.PaneID)
			_ = l.Outbox.End(m, outbox.EndMaybeDelivered, now)
		case !now.Before(m.Expires):
			l.log().Debug("held message expired", "id", m.ID, "pane_id", m.PaneID)
			l.endHeld(m, outbox.EndExpired)
		default:
			return m, true
		}
	}
	return outbox.Message{}, false
}

// endHeld ends held message m untyped (the caller holds its target's
// lock, so one process ends it). Its sender learns of it: a request
// through its record (the courier following it writes the notice), any
// other message by a notice written here. Notices themselves end
// silently.
func (l *Link) endHeld(m outbox.Message, why string) {
	if err := l.Outbox.End(m, why, l.now()); err != nil {
		l.log().Warn("outbox: held message not ended", "id", m.ID, "err", err)
		return
	}
	if m.Notice || l.NoNotices {
		return
	}
	if _, err := l.Outbox.FindRequest(m.ID); err == nil {
		return
	}
	if err := l.holdNotice(m.ID, m.To, heldOutcome(why), m.From, m.FromKey, m.FromPane, m.FromKind, m.FromWorkspace); err != nil {
		l.log().Warn("notice not written", "id", m.ID, "err", err)
	}
}

// endAll ends every message held for t (its target is gone).
func (l *Link) endAll(t *courierTarget, why string) {
	ents, err := l.heldFor(t.hash)
	if err != nil {
		return
	}
	for _, e := range ents {
		if m, err := l.Outbox.Read(e); err == nil {
			l.log().Debug("held message ended", "id", m.ID, "pane_id", m.PaneID, "why", why)
			l.endHeld(m, why)
		}
	}
}

// crash is a test hook: a crash injected at a step of a held delivery.
func (l *Link) crash(step string) {
	if l.CrashAt != nil {
		l.CrashAt(step)
	}
}

// paneWaker keeps one event subscription on the panes the courier waits
// for, and sends a pane id on wake for each change.
type paneWaker struct {
	l      *Link
	wake   chan string
	panes  []string
	cancel context.CancelFunc
	dead   *atomic.Bool // set when the current stream ended
}

func (w *paneWaker) watch(ctx context.Context, panes []string) {
	pw, ok := w.l.Herdr.(PaneWatcher)
	if !ok {
		return
	}
	slices.Sort(panes)
	panes = slices.Compact(panes)
	// A stream of more panes than needed is kept (the events of the
	// others wake nothing), unless it grew to twice what is needed: a
	// target that is done does not cost a new subscription each time.
	live := w.cancel != nil && !w.dead.Load()
	if live && len(panes) > 0 && len(w.panes) <= 2*len(panes)+8 && subset(panes, w.panes) {
		return
	}
	w.stop()
	w.panes = panes
	if len(panes) == 0 {
		return
	}
	sctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	dead := new(atomic.Bool)
	w.dead = dead
	go func() {
		defer dead.Store(true)
		w.l.followPanes(sctx, pw, panes, func(pane string) {
			select {
			case w.wake <- pane:
			default:
			}
		})
	}()
}

// subset reports whether every element of the sorted a is in the
// sorted b.
func subset(a, b []string) bool {
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			return false
		}
	}
	return true
}

func (w *paneWaker) stop() {
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
	w.panes = nil
}
