package courier

import (
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
)

// waitTarget is a target the courier waits for: everything waiting
// on it (its held messages, the pending requests it has to answer) is
// served on one schedule, from one observation of it per round.
type waitTarget struct {
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

// watchedRequest is a pending request the courier follows. Its record
// is read when the courier starts following it and again only while it is
// not known to be typed; what it saw of the recipient's turn is kept
// here, not on disk: a courier that starts over (another process) looks
// at the recipient afresh.
type watchedRequest struct {
	e outbox.Entry
	r outbox.Request
	// busy: the recipient was seen working since the request was typed;
	// rest: since when it has been at rest after that.
	busy bool
	rest time.Time
}
