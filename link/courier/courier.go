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

	// typed: the completion_seq Herdr showed when this process typed a
	// message, by pane and state_change_seq (see completion.go).
	typed completions
}

// New makes a Courier of cfg.
func New(cfg Config) *Courier {
	return &Courier{cfg: cfg, d: cfg.Deliverer}
}

// NoteTyped remembers the completion_seq got (Herdr's answer to a
// prompt to pane, the agent before submission) showed, when it shows one:
// a request typed then counts as handled only after a completion since.
func (c *Courier) NoteTyped(pane string, got deliver.Agent) { c.typed.note(pane, got) }

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
	// lockWait is how long the courier tries for a target's lock.
	lockWait = 50 * time.Millisecond
)

func (c *Courier) kicks() chan struct{} {
	c.kickOnce.Do(func() { c.kick = make(chan struct{}, 1) })
	return c.kick
}

// kickFor wakes the courier: a message was held for the targets of
// key hashes targets (none: the courier scans the whole store).
func (c *Courier) kickFor(targets ...string) {
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

func (c *Courier) poll() time.Duration {
	if c.cfg.Poll > 0 {
		return c.cfg.Poll
	}
	return DefaultPoll
}

// DefaultHoldFor is how long a held message waits at most.
const DefaultHoldFor = 30 * time.Minute

func (c *Courier) holdFor() time.Duration {
	if c.cfg.HoldFor > 0 {
		return c.cfg.HoldFor
	}
	return DefaultHoldFor
}
