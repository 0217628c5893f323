package link

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
)

// Config is what a [Link] is made of (see [New]). A zero field means its
// default (Herdr excepted: New needs one); [Config.Validate] says what is
// wrong with the rest.
type Config struct {
	// Herdr is the control plane.
	Herdr Herdr
	// PaneID is the caller's HERDR_PANE_ID. It may be an alias of a pane
	// that moved since the process started. Empty: the Link has no self
	// (it can still deliver held messages).
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
}

// MaxSubmitHold bounds [Config.SubmitHold]: a hold keeps the target's
// lock, and the process alive at exit, that long.
const MaxSubmitHold = 30 * time.Second

// MaxSettleGap bounds [Config.SettleGap]: each held delivery waits for it.
const MaxSettleGap = 5 * time.Second

// ConfigError is what [Config.Validate] returns: the field that is wrong,
// its value, and why.
type ConfigError struct {
	// Field is the Config field's name ("HoldFor").
	Field string
	// Value is the field's value.
	Value any
	// Problem says what a valid value is ("must not be negative").
	Problem string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("link config: %s %v: %s", e.Field, e.Value, e.Problem)
}

// Validate reports the first field of c that has no meaning: a negative
// count or duration (SettleGap excepted: negative
// trusts one reading), a SubmitHold above [MaxSubmitHold], a SettleGap
// above [MaxSettleGap], or an unknown Delivery mode. The error is a
// [*ConfigError]. A nil Herdr is left to [New]: a command validates its
// flags before it knows the socket. An empty PaneID is valid: such a
// Link has no self (the courier of a deliver pass, for one) and its
// Bootstrap fails.
func (c Config) Validate() error {
	for _, n := range []struct {
		field string
		v     int
	}{{"ReadinessRetries", c.ReadinessRetries}, {"StartLimit", c.StartLimit}} {
		if n.v < 0 {
			return &ConfigError{Field: n.field, Value: n.v, Problem: "must not be negative"}
		}
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{
		{"ReadinessDelay", c.ReadinessDelay}, {"LockWait", c.LockWait}, {"SubmitHold", c.SubmitHold},
		{"CallTimeout", c.CallTimeout}, {"StartTimeout", c.StartTimeout}, {"StartPoll", c.StartPoll},
		{"StartWindow", c.StartWindow}, {"HoldFor", c.HoldFor}, {"CourierPoll", c.CourierPoll},
		{"ReplyGrace", c.ReplyGrace}, {"RequestTTL", c.RequestTTL}, {"ProgressEvery", c.ProgressEvery},
	} {
		if d.v < 0 {
			return &ConfigError{Field: d.field, Value: d.v, Problem: "must not be negative"}
		}
	}
	switch {
	case c.SubmitHold > MaxSubmitHold:
		return &ConfigError{Field: "SubmitHold", Value: c.SubmitHold, Problem: fmt.Sprintf("must be at most %v", MaxSubmitHold)}
	case c.SettleGap > MaxSettleGap:
		return &ConfigError{Field: "SettleGap", Value: c.SettleGap, Problem: fmt.Sprintf("must be at most %v", MaxSettleGap)}
	case c.Delivery != DeliveryFast && c.Delivery != DeliveryConfirm:
		return &ConfigError{Field: "Delivery", Value: int(c.Delivery), Problem: "must be DeliveryFast or DeliveryConfirm"}
	}
	return nil
}
