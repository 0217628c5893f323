package deliver

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/herdr-link/herdr-link/socket"
)

// Herdr is what a delivery asks of Herdr's control plane.
type Herdr interface {
	// GetAgent is agent.get.
	GetAgent(ctx context.Context, target string) (Agent, error)
	// Prompt is agent.prompt without wait; it returns the agent as Herdr
	// reported it.
	Prompt(ctx context.Context, target, text string) (Agent, error)
}

// Locker serializes deliveries to one target terminal across every
// herdr-link process of the machine.
type Locker interface {
	// Lock waits until this process holds the delivery lock of key (the
	// target's terminal id, or "pane:" and its pane id when Herdr reports
	// none), or ctx ends (its error is then returned). The lease lasts d
	// from now: a holder stopped past it may lose the lock to a waiter.
	// Any other error means no lock can be had: nothing may be delivered.
	Lock(ctx context.Context, key string, d time.Duration) (Lease, error)
}

// Lease is a held delivery lock.
type Lease interface {
	// Begin is called right before the prompt; the lease then lasts d
	// from now. An error means the lease was lost (broken while this
	// process was stopped past its deadline): nothing may be typed.
	Begin(d time.Duration) error
	// Extend is called once Herdr answered the prompt: the lease lasts d
	// from now, for the watch and the hold that follow.
	Extend(d time.Duration)
	// Unlock releases the lock; it may be called from any goroutine, more
	// than once.
	Unlock()
}

// Failure says why a delivery failed; [Ports.Fail] makes its error.
type Failure int

const (
	// LeaseLost: the lease was broken while this process was stopped;
	// nothing was typed.
	LeaseLost Failure = iota
	// PeerGone: the target is gone, or another occupant is in its pane;
	// nothing was typed.
	PeerGone
	// Changed: the prompt reached another occupant than the one resolved.
	Changed
	// LockBusy: other deliveries held the lock for the whole wait.
	LockBusy
	// NotReady: the target did not become ready within the call.
	NotReady
	// LockUnusable: no delivery lock can be had (the cause says why).
	LockUnusable
)

// Call names the Herdr call a [Ports.HerdrFailed] error comes from.
type Call int

const (
	// CallPrompt is agent.prompt.
	CallPrompt Call = iota
	// CallProbe is agent.get, before anything is typed.
	CallProbe
)

// Ports is what the protocol above a delivery supplies: its errors, the
// held messages' count, the target's screen, the Herdr release's
// behaviour and a note of each prompt's answer.
type Ports interface {
	// Fail is the error of a delivery that failed for why (cause may be
	// nil).
	Fail(why Failure, cause error) error
	// HerdrFailed is the error of a failed Herdr call.
	HerdrFailed(c Call, err error) error
	// OutboxFailed is the error of a store that could not be read.
	OutboxFailed(err error) error
	// Ended is the error of a call whose ctx ended.
	Ended(ctx context.Context) error
	// Queued counts the messages held (or being typed) for the target of
	// lock key key; ok is false without a store.
	Queued(key string) (n int, ok bool, err error)
	// HoldsTyping reads a's composer: why what it shows keeps a message
	// from being typed, if it does.
	HoldsTyping(ctx context.Context, a Agent) (string, bool)
	// Readable reports whether the composer of an agent of kind can be
	// read; Draft whether a's shows text (a failed read does not).
	Readable(kind string) bool
	Draft(ctx context.Context, a Agent) bool
	// PromptAfterEnter reports whether Herdr answers agent.prompt only
	// after its Enter.
	PromptAfterEnter(ctx context.Context) bool
	// Typed notes Herdr's answer got to a prompt into pane.
	Typed(pane string, got Agent)
}

// The defaults of a Config.
const (
	// SubmitHold is how long after Herdr's answer a delivery keeps the
	// target's lock at least: Herdr types Enter 300 ms after the text.
	SubmitHold = 400 * time.Millisecond
	// DefaultLockWait bounds the wait for the lock of a call without a
	// deadline.
	DefaultLockWait = 10 * time.Second
)

// DefaultSettleGap is the spacing of the two readings of a target that a
// held message waits for: Herdr's detection flaps (a working agent read
// idle for tens of milliseconds), and one reading is not trusted. Two
// readings at rest with the same state_change_seq this far apart mean no
// change in between: a flap inside the gap moves the counter twice.
const DefaultSettleGap = 100 * time.Millisecond

// Config is what a [Deliverer] is made of. A zero duration means its
// default. Herdr and Ports are required, and Budget for a delivery that
// is watched (Confirm, or [Deliverer.TypeWatched] with watch set).
type Config struct {
	Herdr  Herdr
	Ports  Ports
	Logger *slog.Logger
	// Locker serializes deliveries to one target; nil delivers
	// unserialized.
	Locker Locker
	// Confirm: a delivery watches the target for its submission.
	Confirm bool
	// LockWait bounds the wait for the lock and for readiness without a
	// deadline ([DefaultLockWait] when zero).
	LockWait time.Duration
	// SubmitHold is the least hold of the lock after Herdr's answer
	// ([SubmitHold] when zero).
	SubmitHold time.Duration
	// SettleGap is the spacing of a held message's two readings
	// ([DefaultSettleGap] when zero, negative: one reading).
	SettleGap time.Duration
	// CallTimeout is the operation deadline ([socket.DefaultTimeout], the
	// bound of a socket call without one, when zero).
	CallTimeout time.Duration
	// Budget is the confirmation budget of a text of n bytes.
	Budget func(n int) time.Duration
}

// Deliverer makes single deliveries to targets, and counts the locks and
// writes they leave in the background. It is safe for concurrent use.
type Deliverer struct {
	cfg Config
	log *slog.Logger

	// mu guards holds (delivery locks held in the background) and
	// holdsDone (closed when holds drops to zero, for Wait).
	mu        sync.Mutex
	holds     int
	holdsDone chan struct{}
}

// New makes the Deliverer of cfg.
func New(cfg Config) *Deliverer {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = socket.DefaultTimeout
	}
	return &Deliverer{cfg: cfg, log: log}
}

// bound gives ctx the operation deadline (an earlier deadline of ctx
// stays).
func (d *Deliverer) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d.cfg.CallTimeout)
}

// SubmitHold is how long after Herdr's answer a delivery keeps the
// target's lock at least.
func (d *Deliverer) SubmitHold() time.Duration {
	if d.cfg.SubmitHold > 0 {
		return d.cfg.SubmitHold
	}
	return SubmitHold
}

// ReleaseAfter calls unlock once hold has passed since accepted, in the
// background; the hold is counted until then (see [Deliverer.Wait]).
func (d *Deliverer) ReleaseAfter(accepted time.Time, hold time.Duration, unlock func()) {
	left := time.Until(accepted.Add(hold))
	if left <= 0 {
		unlock()
		return
	}
	d.mu.Lock()
	d.holds++
	d.mu.Unlock()
	time.AfterFunc(left, func() {
		unlock()
		d.holdEnded()
	})
}

// holdEnded counts one background hold (or write) as over.
func (d *Deliverer) holdEnded() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.holds--
	if d.holds == 0 && d.holdsDone != nil {
		close(d.holdsDone)
		d.holdsDone = nil
	}
}

// Background runs f in the background, counted like a hold until it
// returns (see [Deliverer.Wait]).
func (d *Deliverer) Background(f func()) {
	d.mu.Lock()
	d.holds++
	d.mu.Unlock()
	go func() {
		defer d.holdEnded()
		f()
	}()
}

// Wait returns once every hold and background write counted is over, or
// ctx ends (its error is returned).
func (d *Deliverer) Wait(ctx context.Context) error {
	d.mu.Lock()
	if d.holds == 0 {
		d.mu.Unlock()
		return nil
	}
	if d.holdsDone == nil {
		d.holdsDone = make(chan struct{})
	}
	done := d.holdsDone
	d.mu.Unlock()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
