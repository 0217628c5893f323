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

// kickCourier wakes the courier: a message was held.
func (l *Link) kickCourier() {
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

// courierTarget is a target the courier waits for.
type courierTarget struct {
	hash string // the target's key hash in the outbox
	key  string
	pane string
	due  time.Time
}

// Deliver runs the courier until ctx ends: it types the held messages of
// the outbox as their targets become ready, oldest first per target
// across every sender of the machine, one per turn. It serves the
// messages this process accepted and those whose accepting process is
// gone. Without an Outbox it only waits for ctx.
func (l *Link) Deliver(ctx context.Context) error {
	if l.Outbox == nil {
		<-ctx.Done()
		return nil
	}
	if _, err := l.Outbox.Token(); err != nil {
		return err
	}
	c := &courier{l: l, targets: map[string]*courierTarget{}, requests: map[string]*watchedRequest{}}
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
			nextScan = time.Time{}
		case pane := <-c.waker.wake:
			c.wake(pane)
		case <-timer.C:
		}
	}
}

// courier is the state of one Deliver loop: the targets it has messages
// for and the requests it follows.
type courier struct {
	l        *Link
	targets  map[string]*courierTarget  // by target key hash
	requests map[string]*watchedRequest // by message id
	waker    *paneWaker
	pruned   time.Time // the last prune of the store
}

// step serves every target and request that is due, and returns how long
// until the next one is.
func (c *courier) step(ctx context.Context) time.Duration {
	a := serveDue(c.targets, func(t *courierTarget) *time.Time { return &t.due },
		func(t *courierTarget) (time.Duration, bool) { return c.l.deliverNext(ctx, t) }, courierParallel)
	b := serveDue(c.requests, func(r *watchedRequest) *time.Time { return &r.due },
		func(r *watchedRequest) (time.Duration, bool) { return c.l.watchRequest(ctx, r) }, 1)
	return min(a, b)
}

// wake makes everything waiting on pane due now.
func (c *courier) wake(pane string) {
	for _, t := range c.targets {
		if t.pane == pane {
			t.due = time.Time{}
		}
	}
	for _, r := range c.requests {
		if r.pane == pane {
			r.due = time.Time{}
		}
	}
}

// panes are the panes the courier waits on.
func (c *courier) panes() []string {
	out := make([]string, 0, len(c.targets)+len(c.requests))
	for _, t := range c.targets {
		out = append(out, t.pane)
	}
	for _, r := range c.requests {
		out = append(out, r.pane)
	}
	return out
}

// scan adds every target with a message this courier serves, and every
// pending request it follows: those of this process, of processes that
// are gone, and messages left being typed by one. What it follows already
// keeps its due time.
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
	alive := map[string]bool{}
	serves := func(e outbox.Entry) bool {
		if e.Owner == tok || e.State == outbox.StateTyping {
			return true
		}
		ok, seen := alive[e.Owner]
		if !seen {
			ok = l.Outbox.OwnerAlive(e.Owner)
			alive[e.Owner] = ok
		}
		return !ok
	}
	for _, e := range ents {
		switch {
		case e.Pending() && c.requests[e.ID] == nil && serves(e):
			if r, err := l.Outbox.Request(e); err == nil {
				c.requests[e.ID] = &watchedRequest{e: e, pane: r.PaneID}
			}
		case e.Held() && c.targets[e.Target] == nil && serves(e):
			m, err := l.Outbox.Read(e)
			if err != nil {
				continue
			}
			if e.Owner != tok {
				l.log().Info("serving a held message of a process that is gone", "id", m.ID, "pane_id", m.PaneID)
			}
			c.targets[e.Target] = &courierTarget{hash: e.Target, key: m.TargetKey, pane: m.PaneID}
		}
	}
}

// deliverNext types the oldest held message for t if t can take it now.
// It returns when to look again, and whether t still has messages.
func (l *Link) deliverNext(ctx context.Context, t *courierTarget) (time.Duration, bool) {
	poll := l.courierPoll()
	var lease Lease = noLease{}
	if l.Locker != nil {
		lctx, cancel := context.WithTimeout(ctx, courierLockWait)
		le, err := l.Locker.Lock(lctx, t.key, l.callTimeout())
		cancel()
		if err != nil {
			// Another delivery is under way (or no lock can be had: the
			// log of the send said why); look again at its end.
			return poll, true
		}
		lease = le
	}
	m, ok := l.oldestHeld(t)
	if !ok {
		lease.Unlock()
		return 0, false
	}
	a, next, keep, ready := l.probeHeld(ctx, t, m)
	if !ready {
		lease.Unlock()
		return next, keep
	}
	batch := l.claim(t, m)
	if len(batch) == 0 {
		lease.Unlock()
		return poll, true
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
		return poll, true
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
	return poll, true
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
	ents, err := l.Outbox.List()
	if err != nil {
		return batch
	}
	for _, e := range ents {
		if e.Target != t.hash || e.State != outbox.StateHeld || e.ID == m.ID {
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
		l.log().Info("held message delivered", "id", m.ID, "to", m.To, "pane_id", m.PaneID, "delivery", d,
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
		l.log().Info("held message not typed yet", "id", m.ID, "pane_id", m.PaneID, "err", err)
	}
}

// tellNotSubmitted tells the sender of held message m that it was typed
// but not submitted: a request ends not_submitted (its notice written
// with the outcome), any other message gets a notice. A notice itself
// ends silently.
func (l *Link) tellNotSubmitted(m outbox.Message) {
	if m.Notice {
		return
	}
	if e, err := l.Outbox.FindRequest(m.ID); err == nil {
		l.endNotSubmitted(e, true)
		return
	}
	if l.NoNotices {
		return
	}
	if err := l.holdNotice(m.ID, m.To, outbox.OutcomeNotSubmitted, m.From, m.FromKey, m.FromPane, m.FromKind, m.FromWorkspace); err != nil {
		l.log().Warn("notice not written", "id", m.ID, "err", err)
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
	ents, err := l.Outbox.List()
	if err != nil {
		return outbox.Message{}, false
	}
	now := l.now()
	for _, e := range ents {
		if e.Target != t.hash || !e.Held() {
			continue
		}
		m, err := l.Outbox.Read(e)
		if err != nil {
			continue
		}
		switch {
		case m.State == outbox.StateTyping:
			l.log().Warn("a held message was being typed by a process that is gone: it may have been delivered, it is not typed again", "id", m.ID, "pane_id", m.PaneID)
			_ = l.Outbox.End(m, outbox.EndMaybeDelivered, now)
		case !now.Before(m.Expires):
			l.log().Info("held message expired", "id", m.ID, "pane_id", m.PaneID)
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
	ents, err := l.Outbox.List()
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Target != t.hash || !e.Held() {
			continue
		}
		if m, err := l.Outbox.Read(e); err == nil {
			l.log().Info("held message ended", "id", m.ID, "pane_id", m.PaneID, "why", why)
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
	if slices.Equal(panes, w.panes) && w.cancel != nil && !w.dead.Load() {
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
		hctx, hcancel := w.l.bound(sctx)
		ev, err := pw.WatchPanes(hctx, panes)
		hcancel()
		if err != nil {
			w.l.log().Debug("courier: no event stream; probing only", "err", err)
			return
		}
		defer ev.Close()
		for {
			pane, err := ev.Next(sctx)
			if err != nil {
				return
			}
			select {
			case w.wake <- pane:
			default:
			}
		}
	}()
}

func (w *paneWaker) stop() {
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
	w.panes = nil
}
