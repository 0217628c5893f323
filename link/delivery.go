package link

import (
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link/deliver"
)

// DeliveryMode says what Send does after Herdr accepted the prompt.
type DeliveryMode int

const (
	// DeliveryFast (the zero value) returns as soon as Herdr accepted the
	// prompt; the result's delivery is "unconfirmed". The delivery lock is
	// still held, in the background, until Herdr's Enter is past.
	DeliveryFast DeliveryMode = iota
	// DeliveryConfirm watches the target's status and state_change_seq
	// for a budget that grows with the message size ([ConfirmBudget]) and
	// reports what it saw. herdr-link's server uses it by default.
	DeliveryConfirm
)

// String returns "fast" or "confirm".
func (m DeliveryMode) String() string {
	if m == DeliveryConfirm {
		return "confirm"
	}
	return "fast"
}

// ParseDeliveryMode parses "fast" or "confirm".
func ParseDeliveryMode(s string) (DeliveryMode, error) {
	switch s {
	case "confirm":
		return DeliveryConfirm, nil
	case "fast":
		return DeliveryFast, nil
	}
	return 0, errors.New(`delivery mode must be "confirm" or "fast"`)
}

// The values of SendResult.Delivery (see the deliver package).
const (
	// DeliverySubmitted: the target was not working, and Herdr showed it
	// change state after the prompt (a turn started).
	DeliverySubmitted = deliver.DeliverySubmitted
	// DeliveryQueued: the target was working and its kind (claude,
	// opencode, pi, omp) queues input until the current turn ends.
	DeliveryQueued = deliver.DeliveryQueued
	// DeliveryInterrupting: the target was working and its kind (codex)
	// submits at once, interrupting the running turn.
	DeliveryInterrupting = deliver.DeliveryInterrupting
	// DeliveryUnconfirmed: no sign of a submission within the budget, or
	// fast mode, or an agent kind whose handling of input while working is
	// not known. The text is in the pane; whether it was submitted is not.
	DeliveryUnconfirmed = deliver.DeliveryUnconfirmed
	// DeliveryNotSubmitted: typed, and no turn started with it; after the
	// watch the target's screen still shows text in its composer (its
	// Enter went to a dialog, or was lost): the text sits there unsent.
	// It is never typed again.
	DeliveryNotSubmitted = deliver.DeliveryNotSubmitted
)

// Timing of the confirmation watch.
const (
	// SubmitHold is how long after Herdr's answer a delivery keeps the
	// target's lock at least: Herdr types Enter 300 ms after the text.
	SubmitHold = deliver.SubmitHold
	// ConfirmBase, ConfirmPerKiB and ConfirmMax make the budget of
	// [ConfirmBudget].
	ConfirmBase   = 2500 * time.Millisecond
	ConfirmPerKiB = 60 * time.Millisecond
	ConfirmMax    = 30 * time.Second
)

// ConfirmBudget is how long Send in confirm mode watches for a text of
// n bytes: 2.5 s plus 60 ms per KiB, at most 30 s (Codex takes about 15 s
// to submit 256 KiB).
func ConfirmBudget(n int) time.Duration {
	return min(ConfirmBase+time.Duration(n/1024)*ConfirmPerKiB, ConfirmMax)
}

// WorkingBehaviour is what an agent of kind does with a delivery while it
// is working: DeliveryQueued, DeliveryInterrupting, or "" when not known
// (the delivery is then watched as for an idle target and reported
// submitted only on a new turn, else unconfirmed).
func WorkingBehaviour(kind string) string { return deliver.WorkingBehaviour(kind) }

// TakesRawInput reports whether an agent of kind is known to take typed
// text raw (see [deliver.TakesRawInput]).
func TakesRawInput(kind string) bool { return deliver.TakesRawInput(kind) }

// TypedText is the text herdr-link types into an agent of kind for text
// (see [deliver.TypedText]).
func TypedText(kind, text string) string { return deliver.TypedText(kind, text) }

// Locker serializes deliveries to one target terminal across every
// herdr-link process of the machine ([deliver.Locker]).
type Locker = deliver.Locker

// Lease is a held delivery lock ([deliver.Lease]).
type Lease = deliver.Lease

// FileLocks adapts a [panelock.Locker] (the machine-wide file locks) to
// Locker.
func FileLocks(pl *panelock.Locker) Locker { return deliver.FileLocks(pl) }

// Ready reports whether Herdr shows a takes a turn (see [deliver.Ready]).
func Ready(a Agent) bool { return deliver.Ready(a) }

// Takes reports whether Herdr shows a able to take a typed message as a
// turn of its own: ready ([Ready]) and at rest (idle or done).
func Takes(a Agent) bool { return deliver.Takes(a) }

// DefaultSettleGap is the spacing of the two readings of a target that a
// held message waits for (see [deliver.DefaultSettleGap]).
const DefaultSettleGap = deliver.DefaultSettleGap
