package herdrstate

import "github.com/herdr-link/herdr-link/schema"

// pane.release_agent: an integration gives up the agent it reported, as
// Crush does when it exits (upstream src/app/api/panes.rs
// handle_pane_release_agent, src/terminal/state.rs
// release_agent_with_mutation). The answer is {"type":"ok"} for any
// pane that exists, whether the release took effect or not.
func paneReleaseAgent(c *call) (any, *herdrError) {
	return onPane(c, func(p *schema.PaneReleaseAgentParams) string { return p.PaneID },
		func(w *World, pn *pane, p *schema.PaneReleaseAgentParams) (any, *herdrError) {
			label := reportedLabel(p.Agent)
			if label == "" {
				return nil, herr("invalid_agent", "agent label must not be empty")
			}
			w.releaseAgent(pn, p.Source, label, p.Seq)
			return okResult, nil
		})
}

// officialHookSource reports Herdr's own integrations (source
// "herdr:<kind>" for the kind itself), whose releases Herdr ignores
// (upstream src/agent_resume.rs is_official_agent_source).
func officialHookSource(source, label string) bool {
	switch label {
	case "claude", "codex", "copilot", "devin", "droid", "kimi", "omp", "mastracode", "pi", "hermes",
		"opencode", "qodercli", "qwen", "kilo", "cursor", "grok":
		return source == "herdr:"+label
	case "agy":
		return source == "herdr:antigravity_cli"
	}
	return false
}

// releaseAgent applies a release (w.mu held). It takes effect only when
// the release names the pane's current agent, comes from the source that
// holds the hook authority (if one does), and its seq is newer than that
// source's last (the rule of reports: without seq, only while the source
// never sent one); a late report with an older seq is then ignored. The
// hook authority and the session go. Unless a detected process of that
// kind still runs in the pane (then detection shows again), the agent
// goes too: no label, status unknown, the name cleared, and
// pane.agent_detected says it was released.
func (w *World) releaseAgent(p *pane, source, label string, seq *uint64) {
	t := p.term
	if officialHookSource(source, label) {
		return
	}
	if t.hook != nil && (t.hook.source != source || t.hook.label != label) {
		return
	}
	if t.label == nil || *t.label != label {
		return
	}
	if !acceptHookSeq(t, source, seq) {
		return
	}
	det, detState := t.label, t.state
	if t.hook != nil {
		det, detState = t.detLabel, t.fallback
	}
	kind, known := knownAgent(label)
	owns := known && det != nil && func() bool { dk, _ := knownAgent(*det); return dk == kind }()
	final, old, hadName := t.status(), t.label, t.name != nil
	if !owns {
		det, detState = nil, schema.AgentStatusUnknown
		t.name = nil
	}
	t.hook, t.detLabel, t.session = nil, nil, nil
	t.label = det
	if !owns {
		w.emit(schema.EventData{PaneAgentDetected: &schema.EventDataPaneAgentDetected{PaneID: p.id, WorkspaceID: p.tab.ws.id,
			Agent: old, Released: true, FinalStatus: &final}})
		if hadName {
			w.emitPaneUpdated(p)
		}
	}
	if detState == t.state && !sameLabel(old, det) {
		w.stateSeq++
		t.seq = w.stateSeq
	}
	w.applyState(p, detState, false)
}
