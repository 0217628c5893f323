package herdrstate

import (
	"fmt"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest/receiver"
)

// SetStatus changes the agent status of the agent in paneID as detection
// would: "idle" after working or blocked reads done unless the pane is
// focused; "done" forces idle-and-unseen. A change of the underlying
// state (idle, working, blocked, unknown; not seen/unseen) bumps the
// server-wide state_change_seq; setting the state it already has changes
// nothing. A managed launch goes pending → blocked on "blocked" and
// becomes active (interactive_ready) on "idle". Leaving working ends the
// modelled agent's turn, so input it queued is submitted.
func (w *World) SetStatus(paneID, status string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	switch schema.AgentStatus(status) {
	case schema.AgentStatusDone, schema.AgentStatusIdle, schema.AgentStatusWorking, schema.AgentStatusBlocked, schema.AgentStatusUnknown:
	default:
		return fmt.Errorf("sockettest: unknown status %q", status)
	}
	w.setState(p, schema.AgentStatus(status))
	return nil
}

// setState applies a detected status (w.mu held); see SetStatus. While
// an integration's report holds the pane (pane.report_agent), the
// detected state is only the fallback behind it.
func (w *World) setState(p *pane, status schema.AgentStatus) {
	if p.term.hook == nil {
		w.applyState(p, status, true)
		return
	}
	w.detectedUnderHook(p, status)
}

// applyState makes status the pane's effective status (w.mu held):
// seen/done, the launch phase, state_change_seq and the events. notify
// tells the modelled program of a change of its state.
func (w *World) applyState(p *pane, status schema.AgentStatus, notify bool) {
	t := p.term
	oldState, oldStatus := t.state, t.status()
	switch status {
	case schema.AgentStatusDone:
		t.state, t.seen = schema.AgentStatusIdle, false
	case schema.AgentStatusIdle:
		// Finishing work (working or blocked → idle) where the user cannot
		// see it is a completion not yet seen: it reads done. Herdr counts
		// it seen when the pane is in the active tab of the active
		// workspace and the outer terminal has not lost focus. The first
		// idle after detection (unknown → idle), and idle during a managed
		// launch, stay seen. Idle → idle changes nothing.
		if t.state != schema.AgentStatusIdle {
			finished := w.finishedTask(t, t.state)
			t.state, t.seen = schema.AgentStatusIdle, !(finished && !w.visible(p))
			if finished {
				w.noteFinish(t)
			}
		}
	default:
		t.state, t.seen = status, true
	}
	switch {
	case t.launch == launchPending && t.state == schema.AgentStatusBlocked:
		t.launch = launchBlocked
	case (t.launch == launchPending || t.launch == launchBlocked) && t.state == schema.AgentStatusIdle:
		t.launch, t.interactiveReady = launchActive, true
	}
	if t.state != oldState {
		w.stateSeq++
		t.seq = w.stateSeq
	}
	if t.status() != oldStatus {
		w.emitStatus(p)
	}
	w.bump()
	if notify && t.state != oldState && t.recv != nil {
		t.recv.StateChanged(oldState, t.state)
	}
}

// SetTerminalFocus records the outer terminal gaining (true) or losing
// (false) focus, as Herdr learns it from focus reports. While it is
// unfocused, agents finishing in the active tab read done.
func (w *World) SetTerminalFocus(focused bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unfocused = !focused
	w.bump()
}

// Detect makes a plain shell pane (or an agent pane) host a detected agent
// of kind, unnamed and in status unknown, as Herdr's process detection
// does. Events: pane_agent_detected, pane_updated when a name was dropped,
// pane_agent_status_changed when the status changed.
func (w *World) Detect(paneID, kind string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	t := p.term
	old, hadName := t.status(), t.name != nil
	if t.label != nil && *t.label != kind {
		t.name = nil // a different agent replaces the occupant and its name
		t.session = nil
	}
	changed := t.label == nil || *t.label != kind || t.state != schema.AgentStatusUnknown
	k := kind
	if t.hook != nil {
		t.label, t.hook, t.detLabel = t.detLabel, nil, nil // a new program: the report no longer holds
	}
	changedLabel := t.label == nil || *t.label != kind
	t.label = &k
	t.state, t.seen = schema.AgentStatusUnknown, true
	if changed {
		w.stateSeq++
		t.seq = w.stateSeq
	}
	// A newly started program: empty composer, raw typing until ready.
	if t.recv != nil {
		t.recv.Stop()
	}
	t.recv = newModel(w, t, kind, Behaviour{}, "")
	if changedLabel {
		w.emit(schema.EventData{PaneAgentDetected: &schema.EventDataPaneAgentDetected{PaneID: p.id, WorkspaceID: p.tab.ws.id, Agent: &k}})
	}
	if hadName && t.name == nil {
		w.emitPaneUpdated(p)
	}
	if t.status() != old {
		w.emitStatus(p)
	}
	w.bump()
	return nil
}

// Exit makes the agent in paneID exit: its label and name are cleared and
// the pane becomes a plain shell. Events: pane_agent_detected with
// released and the final status, pane_updated when a name was dropped,
// pane_agent_status_changed when the status changed.
func (w *World) Exit(paneID string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	w.exit(p)
	return nil
}

// exit clears p's agent, as when it exits (w.mu held).
func (w *World) exit(p *pane) {
	t := p.term
	final, label, hadName := t.status(), t.label, t.name != nil
	changed := t.label != nil || t.name != nil || t.state != schema.AgentStatusUnknown
	t.label, t.name, t.session = nil, nil, nil
	t.hook, t.detLabel = nil, nil
	t.state, t.seen, t.launch = schema.AgentStatusUnknown, true, launchNone
	if changed {
		w.stateSeq++
		t.seq = w.stateSeq
	}
	if t.recv != nil {
		t.recv.Stop()
		t.recv = nil
	}
	if label != nil || hadName {
		w.emit(schema.EventData{PaneAgentDetected: &schema.EventDataPaneAgentDetected{PaneID: p.id, WorkspaceID: p.tab.ws.id,
			Agent: label, Released: true, FinalStatus: &final}})
	}
	if hadName {
		w.emitPaneUpdated(p)
	}
	if t.status() != final {
		w.emitStatus(p)
	}
	w.bump()
}

// SetTitle changes the terminal title of paneID, as a program's OSC 0/2
// sequence does; Herdr emits pane_updated for every title change.
func (w *World) SetTitle(paneID, title string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	if p.term.title != nil && *p.term.title == title {
		return nil
	}
	p.term.title = &title
	w.emitPaneUpdated(p)
	w.bump()
	return nil
}

// Rename sets (or, with "", clears) the agent name of paneID without any
// of agent.rename's checks, as a restore or an external tool might.
func (w *World) Rename(paneID, name string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	if name == "" {
		p.term.name = nil
	} else {
		p.term.name = &name
	}
	w.emitPaneUpdated(p)
	w.bump()
	return nil
}

// Move moves paneID to the end of the first tab of workspace wsID, as
// pane.move does: a cross-workspace move gives the pane a new id and
// keeps the old one as a pane.* alias. It returns the new id.
func (w *World) Move(paneID, wsID string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return "", err
	}
	ws := w.workspaceByArg(wsID)
	if ws == nil {
		return "", fmt.Errorf("sockettest: no workspace %s", wsID)
	}
	res := w.movePane(p, ws.tabs[0], false, false)
	return res.Pane.PaneID, nil
}

// Close closes paneID as pane.close does.
func (w *World) Close(paneID string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	w.closePane(p)
	return nil
}

// SetBehaviour changes how the modelled agent in paneID reacts from now
// on (stuck composer, turn time, submit latency, bracketed paste).
func (w *World) SetBehaviour(paneID string, b Behaviour) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	m, ok := p.term.recv.(*receiver.Model)
	if !ok {
		return fmt.Errorf("sockettest: pane %s hosts no modelled agent", paneID)
	}
	m.SetBehaviour(b)
	return nil
}

// AddAgents appends n named agents (agent-<i>, kind claude, idle) in new
// panes of tab tabID, for scale tests. It returns their pane ids.
func (w *World) AddAgents(tabID string, n int, prefix string) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.tabByID(tabID)
	if t == nil {
		return nil, fmt.Errorf("sockettest: no tab %s", tabID)
	}
	ids := make([]string, 0, n)
	for i := 0; i < n; i++ {
		t.ws.paneSeq++
		p := &pane{id: t.ws.id + ":p" + EncodeNumber(uint64(t.ws.paneSeq)), tab: t, cwd: "/work"}
		p.term = w.newTerminal()
		_ = w.occupy(p.term, &AgentSpec{Kind: "claude", Name: fmt.Sprintf("%s%d", prefix, i), Status: "idle"})
		t.panes = append(t.panes, p)
		ids = append(ids, p.id)
	}
	return ids, nil
}
