package link

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// Gate is the environment check: HERDR_ENV=1, a HERDR_PANE_ID, and a
// resolvable Herdr socket path. getenv is os.Getenv when nil.
type Gate struct {
	OK     bool
	PaneID string
	Socket socket.Resolution
	// Reason says which condition failed (operator text).
	Reason string
	// Failed names the failed condition for [Gate.Advice]: one of the
	// Failed* constants, "" when OK.
	Failed string
}

// CheckGate evaluates the environment gate.
func CheckGate(getenv func(string) string) Gate {
	if getenv == nil {
		getenv = os.Getenv
	}
	var g Gate
	g.PaneID = getenv(socket.EnvPaneID)
	res, err := socket.ResolvePath(getenv)
	g.Socket = res
	switch {
	case inHerdrCore(getenv):
		g.Reason, g.Failed = "a herdr-core terminal (HC_TERMINAL_ID is set, HERDR_ENV and HERDR_PANE_ID are not), whose socket this herdr-link does not speak", FailedHerdrCore
	case getenv(socket.EnvHerdr) == "":
		g.Reason, g.Failed = "HERDR_ENV is not set", FailedHerdrEnv
	case getenv(socket.EnvHerdr) != "1":
		g.Reason, g.Failed = "HERDR_ENV is not 1", FailedHerdrEnvValue
	case g.PaneID == "":
		g.Reason, g.Failed = "HERDR_PANE_ID is not set", FailedPaneID
	case err != nil:
		g.Reason, g.Failed = err.Error(), FailedSocketPath
	default:
		g.OK = true
	}
	return g
}

// Link runs herdr-link/1 operations for the agent in one pane. Self and
// targets are resolved from Herdr on every call; nothing about them is
// cached. A Link is safe for concurrent use.
type Link struct {
	// Herdr is the control plane.
	Herdr Herdr
	// PaneID is the caller's HERDR_PANE_ID. It may be an alias of a pane
	// that moved since the process started.
	PaneID string
	// Logger receives operator detail (Herdr's errors, ids); nil discards.
	Logger *slog.Logger
	// Now is the clock for message ids; time.Now when nil.
	Now func() time.Time
	// ReadinessRetries and ReadinessDelay bound Bootstrap's wait for Herdr
	// to detect the occupant (3 × 200 ms when zero).
	ReadinessRetries int
	ReadinessDelay   time.Duration
	// NameGen generates self names for the bootstrap; "hl-" and 8 random
	// hex digits when nil.
	NameGen func() string
	// Delivery chooses what Send does after Herdr accepted the prompt
	// (fast when zero; herdr-link's server defaults to confirm).
	Delivery DeliveryMode
	// Locker, when set, serializes deliveries to one target across
	// processes (see the panelock package); nil delivers unserialized.
	Locker Locker
	// LockWait bounds the wait for a target's delivery lock, and for its
	// readiness, when the call's context has no deadline (10 s when
	// zero); with a deadline (the operation deadline, CallTimeout) the
	// wait lasts until a second before it.
	LockWait time.Duration
	// SubmitHold is how long after Herdr's answer a delivery keeps the
	// target's lock at least, unless its submission was seen sooner
	// ([SubmitHold] when zero; lower it only for a simulator whose Enter
	// comes sooner than Herdr's 300 ms).
	SubmitHold time.Duration
	// ConfirmBudget replaces [ConfirmBudget] (tests).
	ConfirmBudget func(textBytes int) time.Duration
	// SettleGap is the spacing of the two readings a held message waits
	// for before it is typed ([DefaultSettleGap] when zero; negative:
	// one reading is trusted, as before herdr-link settled, for
	// measurements).
	SettleGap time.Duration
	// CallTimeout is the one overall deadline of an operation's Herdr work
	// (every socket call of a Peers, Send, Close or Bootstrap, the
	// protocol ping and the self bootstrap included): each socket call
	// gets what is left of it. DefaultCallTimeout when zero.
	CallTimeout time.Duration
	// Capabilities, when set, is the Herdr behaviour to follow instead of
	// the one ping's version says ([CapabilitiesFor]; tests).
	Capabilities *Capabilities
	// Dir is the caller's working directory (the process's when empty):
	// Start looks for configured agents from it upward and resolves cwd
	// against it. Home bounds both (the user's home when empty).
	Dir, Home string
	// StartTimeout bounds Start's wait for a started agent to become
	// ready (DefaultStartTimeout when zero); StartPoll is the interval of
	// its polls (100 ms when zero).
	StartTimeout, StartPoll time.Duration
	// StartLimit and StartWindow bound starts: at most StartLimit in any
	// StartWindow (DefaultStartLimit, DefaultStartWindow when zero).
	StartLimit  int
	StartWindow time.Duration
	// Outbox, when set, holds messages sent with WhenIdle that the target
	// cannot take yet; [Link.Deliver] types them. nil: such a send fails.
	Outbox *outbox.Store
	// HoldFor is how long a held message waits at most (DefaultHoldFor
	// when zero).
	HoldFor time.Duration
	// CourierPoll is the spacing of the courier's fallback probes of the
	// targets it waits for (DefaultCourierPoll when zero); Herdr's events
	// wake it sooner.
	CourierPoll time.Duration
	// ReplyGrace is how long a recipient whose turn with a request ended
	// has to answer before the request counts as handled
	// (DefaultReplyGrace when zero); RequestTTL how long a request is
	// tracked at most (DefaultRequestTTL when zero).
	ReplyGrace, RequestTTL time.Duration
	// ProgressEvery is the spacing of WaitReply's progress reports (5 s
	// when zero).
	ProgressEvery time.Duration
	// NoNotices turns off the notices typed into a sender's pane when its
	// request ends without a reply.
	NoNotices bool
	// CrashAt, when set, is called at each step of a held delivery
	// ("claimed", "typed"): tests inject crashes there.
	CrashAt func(step string)

	mu       sync.Mutex
	inflight *bootCall
	variants map[string]int // guarded by mu: startinput.go's round robin
	starts   startRate      // guarded by mu: startlimit.go's window

	// holdMu guards holds (delivery locks held in the background) and
	// holdsDone (closed when holds drops to zero, for Wait).
	holdMu    sync.Mutex
	holds     int
	holdsDone chan struct{}

	// kick wakes the courier (a message was held); made by Deliver.
	// kicked are the target key hashes of the messages held since its
	// last wake ("" for a whole scan).
	kickOnce sync.Once
	kick     chan struct{}
	kickMu   sync.Mutex
	kicked   map[string]bool

	// typedComp: the completion_seq Herdr showed when this process typed
	// a message, by pane and state_change_seq (see completion.go).
	compMu    sync.Mutex
	typedComp map[typedAt]uint64
}

type bootCall struct {
	done chan struct{}
	name string
	err  error
}

// DefaultCallTimeout is a Link's CallTimeout when zero.
const DefaultCallTimeout = socket.DefaultTimeout

func (l *Link) callTimeout() time.Duration {
	if l.CallTimeout > 0 {
		return l.CallTimeout
	}
	return DefaultCallTimeout
}

// bound gives ctx the operation deadline (an earlier deadline of ctx
// stays).
func (l *Link) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, l.callTimeout())
}

func (l *Link) log() *slog.Logger {
	if l.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Logger
}

// Peer is an agent as a model sees it: a name and an advisory state.
type Peer struct {
	Name  string `json:"name"`
	State string `json:"state"`
	// Held counts the caller's messages held for this peer (left out
	// when none).
	Held int `json:"held,omitempty"`
	// AwaitingReply lists the ids of the caller's requests to this peer
	// that have no outcome yet (left out when none).
	AwaitingReply []string `json:"awaiting_reply,omitempty"`
}

// PeersResult is what Peers returns.
type PeersResult struct {
	Self  Peer   `json:"self"`
	Peers []Peer `json:"peers"`
}

// SendResult is what Send returns. Status is always "sent" (Herdr
// accepted the prompt); Delivery says what followed: DeliverySubmitted,
// DeliveryQueued, DeliveryInterrupting or DeliveryUnconfirmed.
type SendResult struct {
	Status   string `json:"status"`
	ID       string `json:"id"`
	To       string `json:"to"`
	Delivery string `json:"delivery"`
}

// CloseResult is what Close returns.
type CloseResult struct {
	Status string `json:"status"`
	Agent  string `json:"agent"`
}

// State maps a Herdr status to the herdr-link state vocabulary:
// idle, working, blocked, done or unknown (for anything else).
func State[S ~string](s S) string {
	if schema.AgentStatus(s).Known() {
		return string(s)
	}
	return string(schema.AgentStatusUnknown)
}
