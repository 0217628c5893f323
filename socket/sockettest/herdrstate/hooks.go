package herdrstate

import (
	"strings"

	"github.com/herdr-link/herdr-link/schema"
)

// hookAuthority is the state an agent integration last reported for a
// pane (pane.report_agent): Herdr's hook authority. While it is set and
// effective, it is the pane's agent label and state, whatever screen
// detection says (upstream src/terminal/state.rs,
// set_hook_authority_at and recompute_effective_state).
type hookAuthority struct {
	source, label string
	state         schema.AgentStatus
	message       *string
}

// fullLifecycleHook reports the integrations whose reports alone decide
// the state, detection being ignored (upstream src/detect/mod.rs,
// full_lifecycle_hook_authority).
func fullLifecycleHook(source, label string) bool {
	switch source + "|" + label {
	case "herdr:pi|pi", "herdr:omp|omp", "herdr:mastracode|mastracode", "herdr:opencode|opencode",
		"herdr:kilo|kilo", "herdr:kimi|kimi":
		return true
	}
	return false
}

// sessionOnlyHook reports the integrations that only report a session
// identity: their state reports change nothing (session_identity_only_integration).
func sessionOnlyHook(source, label string) bool {
	switch source + "|" + label {
	case "herdr:hermes|hermes", "herdr:qwen|qwen", "herdr:antigravity_cli|agy":
		return true
	}
	return false
}

// reportedLabel is the agent label of a report as Herdr normalises it:
// trimmed, a built-in kind's alias replaced by its canonical label; ""
// when empty (invalid_agent).
func reportedLabel(agent string) string {
	a := strings.TrimSpace(agent)
	if kind, ok := knownAgent(a); ok {
		return kind
	}
	return a
}

// detectedLabel is the label screen detection gives the pane (w.mu held).
func (t *terminal) detectedLabel() *string {
	if t.hook != nil {
		return t.detLabel
	}
	return t.label
}

// reportAgent applies a report (w.mu held), as Herdr does when it accepts
// it: a session-only integration's state is ignored, a known label that
// is not the detected agent's is ignored, a report whose seq is not newer
// than the source's last one is ignored (without seq: only while the
// source never sent one). Otherwise the report becomes the pane's hook
// authority and the effective label and state are recomputed; their
// changes bump state_change_seq and emit pane.agent_detected and
// pane.agent_status_changed as for detection.
func (w *World) reportAgent(p *pane, r schema.PaneReportAgentParams) {
	t := p.term
	label := reportedLabel(r.Agent)
	if sessionOnlyHook(r.Source, label) {
		return
	}
	if det := t.detectedLabel(); det != nil {
		dk, dKnown := knownAgent(*det)
		if rk, rKnown := knownAgent(label); dKnown && rKnown && dk != rk {
			return
		}
	}
	if !acceptHookSeq(t, r.Source, r.Seq) {
		return
	}
	if t.hook == nil {
		t.detLabel, t.fallback = t.label, t.state
	}
	t.hook = &hookAuthority{source: r.Source, label: label, state: schema.AgentStatus(r.State), message: r.Message}
	t.fallbackAfterHook = false
	w.applyHook(p)
}

func acceptHookSeq(t *terminal, source string, seq *uint64) bool {
	last, seen := t.hookSeqs[source]
	if seq == nil {
		return !seen
	}
	if seen && *seq <= last {
		return false
	}
	if t.hookSeqs == nil {
		t.hookSeqs = map[string]uint64{}
	}
	t.hookSeqs[source] = *seq
	return true
}

// effective is the label and state Herdr shows for a pane under a hook
// authority (w.mu held). A full-lifecycle report for a built-in kind holds
// only while that kind is the detected agent; otherwise detection shows.
// A dialog detection saw after the report (blocked) overrides a report of
// the same agent that is not blocked, except for full-lifecycle sources.
func (t *terminal) effective() (*string, schema.AgentStatus) {
	h, det := t.hook, t.detLabel
	full := fullLifecycleHook(h.source, h.label)
	hk, known := knownAgent(h.label)
	sameAgent := det != nil && known && func() bool { dk, _ := knownAgent(*det); return dk == hk }()
	if full && known && !sameAgent {
		return det, t.fallback
	}
	label := h.label
	if !full && t.fallback == schema.AgentStatusBlocked && t.fallbackAfterHook && h.state != schema.AgentStatusBlocked && sameAgent {
		return &label, schema.AgentStatusBlocked
	}
	return &label, h.state
}

// applyHook makes the effective label and state the pane's (w.mu held).
func (w *World) applyHook(p *pane) {
	t := p.term
	label, state := t.effective()
	if !sameLabel(label, t.label) {
		t.label = label
		oldState := t.state
		w.emit(schema.EventData{PaneAgentDetected: &schema.EventDataPaneAgentDetected{PaneID: p.id, WorkspaceID: p.tab.ws.id, Agent: label}})
		if state == oldState {
			w.bump()
		}
	}
	w.applyState(p, state, false)
}

func sameLabel(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// detectedUnderHook records a detected state behind a hook authority
// (w.mu held) and tells the program of its own change.
func (w *World) detectedUnderHook(p *pane, status schema.AgentStatus) {
	t := p.term
	if status == schema.AgentStatusDone {
		status = schema.AgentStatusIdle
	}
	old := t.fallback
	t.fallback, t.fallbackAfterHook = status, true
	w.applyHook(p)
	if old != status && t.recv != nil {
		t.recv.StateChanged(old, status)
	}
}
