package herdrstate

import (
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest/receiver"
)

// reader is the program reading a terminal: the modelled agent or a real
// program (see package receiver).
type reader = receiver.Receiver

// Submission is one user turn an agent received (see package receiver).
type Submission = receiver.Submission

// Behaviour is how a modelled agent reacts to input (see package
// receiver).
type Behaviour = receiver.Behaviour

// What Herdr writes around a prompt's text when the program has
// bracketed paste on.
const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// termView is a terminal of w as its modelled program sees it
// ([receiver.Terminal]); like the model, it runs with w.mu held.
type termView struct {
	w *World
	t *terminal
}

func newModel(w *World, t *terminal, label string, b Behaviour, draft string) *receiver.Model {
	return receiver.NewModel(termView{w, t}, label, b, draft)
}

// State is the program's own state: the detected one, which an
// integration's report may override for Herdr but not for the program.
func (v termView) State() schema.AgentStatus {
	if v.t.hook != nil {
		return v.t.fallback
	}
	return v.t.state
}

// SetState applies a detected state to the terminal's pane, if it still
// has one.
func (v termView) SetState(s schema.AgentStatus) {
	if p := v.w.paneOfTerm(v.t); p != nil {
		v.w.setState(p, s)
	}
}

func (v termView) Submitted(s Submission)    { v.t.subs = append(v.t.subs, s) }
func (v termView) Submissions() []Submission { return v.t.subs }
func (v termView) Changed()                  { v.w.bump() }
func (v termView) Now() time.Time            { return v.w.clock.Now() }
func (v termView) AfterFunc(d time.Duration, f func()) func() bool {
	return v.w.clock.AfterFunc(d, func() {
		v.w.mu.Lock()
		defer v.w.mu.Unlock()
		f()
	})
}

// Herdr's agent.prompt timings.
const (
	// PromptSubmitDelay is the delay between a prompt's text and its
	// Enter.
	PromptSubmitDelay = 300 * time.Millisecond
	// PromptEffectTimeout bounds agent.prompt's wait for a state change.
	PromptEffectTimeout = 5 * time.Second
)
