package herdrstate

import (
	"time"

	"github.com/herdr-link/herdr-link/schema"
)

// SetPromptFlap makes Herdr's detection of the agent in paneID flap after
// every accepted agent.prompt, before the Enter: the agent reads working
// at once (state_change_seq steps) and its previous state d later (it
// steps again), as a screen rule misreading the pasted text would. The
// modelled agent's composer is not touched. d of 0 turns it off.
func (w *World) SetPromptFlap(paneID string, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	p.term.flap = d
	return nil
}

// flapAfterPrompt starts the flap of SetPromptFlap (w.mu held).
func (w *World) flapAfterPrompt(p *pane) {
	t := p.term
	if t.flap <= 0 || t.state == schema.AgentStatusWorking {
		return
	}
	prev := t.state
	w.setState(p, schema.AgentStatusWorking)
	w.clock.AfterFunc(t.flap, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if p.term == t && t.state == schema.AgentStatusWorking {
			w.setState(p, prev)
		}
	})
}
