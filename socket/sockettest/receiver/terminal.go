package receiver

import (
	"time"

	"github.com/herdr-link/herdr-link/schema"
)

// Receiver is the program behind an agent pane's terminal, the receiving
// end of agent.prompt. The simulator's own receiver is [Model], which
// follows what real agent TUIs were seen to do; a pane backed by a real
// program on a PTY implements the same interface.
//
// The world calls every method with its lock held, so none may block (a
// PTY receiver hands writes to its own goroutine). A receiver changes the
// world through its [Terminal] (SetState, Submitted), from its own timers
// too: the world runs them with its lock held.
type Receiver interface {
	// BracketedPaste reports whether the program has turned bracketed
	// paste on (ESC[?2004h). Herdr wraps a prompt's text in ESC[200~ …
	// ESC[201~ exactly then, and sends it raw otherwise.
	BracketedPaste() bool
	// EnterKey is Enter in the terminal's current key encoding ("\r").
	EnterKey() string
	// Input receives one write Herdr made to the terminal, in order: a
	// prompt's text (bracketed or raw), Copilot's focus-in report, or
	// the Enter ("\r") sent 300 ms after the text.
	Input(data string)
	// StateChanged reports a change of the agent's detected state (the
	// underlying idle/working/blocked/unknown), whoever made it: a turn
	// ended by World.SetStatus releases queued input as one the model
	// ended itself does.
	StateChanged(from, to schema.AgentStatus)
	// Screen is the text pane.read shows.
	Screen() string
	// Stop ends the program (exit, replacement, pane close); its pending
	// timers do nothing afterwards.
	Stop()
}

// A Terminal is the world's side of the terminal a [Model] reads: the
// agent's detected state, the turns recorded, the world's clock. Every
// method is called with the world's lock held.
type Terminal interface {
	// State is the agent's underlying detected state (idle, working,
	// blocked, unknown).
	State() schema.AgentStatus
	// SetState changes it as detection would (working when a turn
	// starts, idle when it ends); the world then calls StateChanged.
	SetState(schema.AgentStatus)
	// Submitted records a user turn the agent's model got.
	Submitted(Submission)
	// Submissions are the turns recorded so far, oldest first.
	Submissions() []Submission
	// Changed records that what the terminal holds changed.
	Changed()
	// Now is the world clock's time.
	Now() time.Time
	// AfterFunc calls f on the world clock once d has passed, with the
	// world's lock held; stop cancels it.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}
