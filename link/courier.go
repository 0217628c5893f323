package link

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/socket"
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
	w := &paneWaker{l: l, wake: make(chan string, 16)}
	defer w.stop()
	targets := map[string]*courierTarget{}
	nextScan := time.Time{}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		now := time.Now()
		if !now.Before(nextScan) {
			l.scan(targets, now)
			nextScan = now.Add(scanEvery)
			w.watch(ctx, targets)
		}
		for h, t := range targets {
			if now.Before(t.due) {
				continue
			}
			next, keep := l.deliverNext(ctx, t)
			if !keep {
				delete(targets, h)
				continue
			}
			t.due = time.Now().Add(next)
		}
		wait := time.Until(nextScan)
		for _, t := range targets {
			wait = min(wait, time.Until(t.due))
		}
		timer.Reset(max(wait, time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-l.kicks():
			nextScan = time.Time{}
		case pane := <-w.wake:
			for _, t := range targets {
				if t.pane == pane {
					t.due = time.Time{}
				}
			}
		case <-timer.C:
		}
	}
}

// scan adds to targets every target with a message this courier serves:
// accepted by this process, or by one that is gone, or left being typed
// by one. Targets it waits for already keep their due time.
func (l *Link) scan(targets map[string]*courierTarget, now time.Time) {
	l.Outbox.Prune(now)
	ents, err := l.Outbox.List()
	if err != nil {
		l.log().Warn("outbox unreadable", "err", err)
		return
	}
	alive := map[string]bool{}
	for _, e := range ents {
		if e.State == outbox.StateEnded || targets[e.Target] != nil {
			continue
		}
		ok, seen := alive[e.Owner]
		if !seen {
			ok = l.Outbox.OwnerAlive(e.Owner)
			alive[e.Owner] = ok
		}
		tok, _ := l.Outbox.Token()
		if ok && e.Owner != tok && e.State == outbox.StateHeld {
			continue // its own process serves it
		}
		m, err := l.Outbox.Read(e)
		if err != nil {
			continue
		}
		if e.Owner != tok && !ok {
			l.log().Info("serving a held message of a process that is gone", "id", m.ID, "pane_id", m.PaneID)
		}
		targets[e.Target] = &courierTarget{hash: e.Target, key: m.TargetKey, pane: m.PaneID}
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
	// A delivery once begun is not cut short by the courier's end: the
	// operation deadline and the watch's budget bound it.
	ctx = context.WithoutCancel(ctx)
	hctx, cancel := l.bound(ctx)
	defer cancel()
	a, err := l.Herdr.GetAgent(hctx, m.PaneID)
	switch {
	case errors.Is(err, socket.ErrAgentNotFound):
		lease.Unlock()
		l.endAll(t, outbox.EndGone)
		return 0, false
	case err != nil:
		lease.Unlock()
		l.log().Debug("courier probe failed", "pane_id", m.PaneID, "err", err)
		return poll, true
	case m.TerminalID != "" && a.TerminalID != m.TerminalID,
		m.Kind != "" && a.Kind != "" && a.Kind != m.Kind,
		a.WorkspaceID != m.WorkspaceID:
		lease.Unlock()
		l.endAll(t, outbox.EndGone)
		return 0, false
	case !Takes(a):
		lease.Unlock()
		return poll, true
	}
	if c, err := l.composer(hctx, a); err == nil && c == ComposerDraft {
		lease.Unlock()
		return min(poll, draftPoll), true
	}
	if err := l.Outbox.Claim(&m); err != nil {
		lease.Unlock()
		return poll, true
	}
	l.crash("claimed")
	if err := lease.Begin(untilDeadline(hctx)); err != nil {
		// Broken while this process was stopped: another delivery's turn.
		// The claim stays on disk, as a typer that died would leave it:
		// the message is never typed twice.
		lease.Unlock()
		_ = l.Outbox.End(m, outbox.EndMaybeDelivered, l.now())
		return poll, true
	}
	a.Name = m.To
	// The lock is released only once the outcome is on disk: a courier
	// that took it between the release and the record would find the
	// claim and end the message as may-have-been-delivered.
	sl := &settleFirst{Lease: lease}
	d, err := l.typeHeld(ctx, hctx, a, m.Text, sl)
	l.settle(m, d, err)
	sl.settled()
	return poll, true
}

// settleFirst is a lease whose release waits for settled: an Unlock
// before it is done then.
type settleFirst struct {
	Lease
	mu      sync.Mutex
	done    bool // settled was called
	pending bool // Unlock was called before settled
}

func (s *settleFirst) Unlock() {
	s.mu.Lock()
	if !s.done {
		s.pending = true
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.Lease.Unlock()
}

func (s *settleFirst) settled() {
	s.mu.Lock()
	s.done = true
	p := s.pending
	s.mu.Unlock()
	if p {
		s.Lease.Unlock()
	}
}

// settle records the outcome of typing the held message m.
func (l *Link) settle(m outbox.Message, d string, err error) {
	switch {
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

// typeHeld types a held message: always watched for its submission, so
// that the lock is kept until the turn it starts shows, and the next
// held message waits for that turn to end.
func (l *Link) typeHeld(ctx, hctx context.Context, target Agent, text string, lease Lease) (string, error) {
	return l.typeWatched(ctx, hctx, target, text, lease, true)
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
		if e.Target != t.hash || e.State == outbox.StateEnded {
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
			_ = l.Outbox.End(m, outbox.EndExpired, now)
		default:
			return m, true
		}
	}
	return outbox.Message{}, false
}

// endAll ends every message held for t (its target is gone).
func (l *Link) endAll(t *courierTarget, why string) {
	ents, err := l.Outbox.List()
	if err != nil {
		return
	}
	now := l.now()
	for _, e := range ents {
		if e.Target != t.hash || e.State == outbox.StateEnded {
			continue
		}
		if m, err := l.Outbox.Read(e); err == nil {
			l.log().Info("held message ended", "id", m.ID, "pane_id", m.PaneID, "why", why)
			_ = l.Outbox.End(m, why, now)
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

func (w *paneWaker) watch(ctx context.Context, targets map[string]*courierTarget) {
	pw, ok := w.l.Herdr.(PaneWatcher)
	if !ok {
		return
	}
	panes := make([]string, 0, len(targets))
	for _, t := range targets {
		panes = append(panes, t.pane)
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
