package herdrstate

import (
	"fmt"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// resolveAgent implements Herdr's agent target rules (w.mu held): a
// current canonical pane id hosting an agent, else an exact name across
// every workspace.
func (w *World) resolveAgent(target string) (*pane, *herdrError) {
	if p := w.paneByID(target); p != nil && p.term.isAgent() {
		return p, nil
	}
	var matches []*pane
	for _, p := range w.panes() {
		if p.term.name != nil && *p.term.name == target {
			matches = append(matches, p)
		}
	}
	switch len(matches) {
	case 0:
		return nil, herr("agent_not_found", "agent target %s not found", target)
	case 1:
		return matches[0], nil
	}
	return nil, herr("agent_target_ambiguous", "agent target %s is ambiguous; candidates: %s", target, candidates(matches))
}

func candidates(ps []*pane) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		cwd := p.cwd
		if cwd == "" {
			cwd = "unknown"
		}
		parts[i] = fmt.Sprintf("terminal_id=%s pane_id=%s workspace_id=%s tab_id=%s cwd=%s status=%s",
			p.term.id, p.id, p.tab.ws.id, p.tab.id, cwd, capitalize(string(p.term.status())))
	}
	return strings.Join(parts, "; ")
}

func agentGet(c *call) (any, *herdrError) {
	return onAgent(c, func(p *schema.AgentTarget) string { return p.Target },
		func(w *World, pn *pane, _ *schema.AgentTarget) (any, *herdrError) {
			return schema.ResultAgentInfo{Type: schema.ResultTypeAgentInfo, Agent: w.agentInfo(pn)}, nil
		})
}

func agentList(c *call) (any, *herdrError) {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	// Between changes the serialized list is reused: what is measured
	// against the simulator is the client, not the simulator's encoder.
	if c.w.listCache != nil && c.w.listGen == c.w.gen {
		return jsonx.RawMessage(c.w.listCache), nil
	}
	agents := []schema.AgentInfo{}
	for _, p := range c.w.panes() {
		if p.term.isAgent() {
			agents = append(agents, c.w.agentInfo(p))
		}
	}
	b, err := jsonx.Marshal(schema.ResultAgentList{Type: schema.ResultTypeAgentList, Agents: agents})
	if err != nil {
		return nil, herr("internal_error", "failed to encode response")
	}
	c.w.listCache, c.w.listGen = b, c.w.gen
	return jsonx.RawMessage(b), nil
}

// prompt applies agent.prompt's checks and writes (w.mu held).
func (c *call) prompt(p schema.AgentPromptParams) (*pane, schema.AgentInfo, *herdrError) {
	return c.w.prompt(p, c.s.SubmitDelay)
}

// prompt is agent.prompt without wait (w.mu held): the checks in Herdr's
// order, then the text (in paste brackets when the program has bracketed
// paste on, after ESC[I for Copilot) and Enter submitDelay later on the
// world clock. info is the agent before submission.
func (w *World) prompt(p schema.AgentPromptParams, submitDelay time.Duration) (*pane, schema.AgentInfo, *herdrError) {
	if p.Text == "" {
		return nil, schema.AgentInfo{}, herr("empty_agent_prompt", "agent prompt must not be empty")
	}
	pn, e := w.resolveAgent(p.Target)
	if e != nil {
		return nil, schema.AgentInfo{}, e
	}
	t := pn.term
	if t.state == schema.AgentStatusBlocked {
		return nil, schema.AgentInfo{}, herr("agent_blocked", "agent %s is blocked and requires interactive input", p.Target)
	}
	kind, known := "", false
	if t.label != nil {
		kind, known = knownAgent(*t.label)
	}
	if !known || t.launch == launchPending || t.launch == launchBlocked {
		return nil, schema.AgentInfo{}, herr("agent_not_ready", "agent %s is not an active named agent", p.Target)
	}
	if t.notForeground {
		return nil, schema.AgentInfo{}, herr("agent_not_ready", "agent %s is no longer the pane foreground process", p.Target)
	}
	before := w.agentInfo(pn)
	if kind == "copilot" {
		w.write(t, "\x1b[I")
	}
	if t.promptFails {
		return nil, schema.AgentInfo{}, herr("agent_prompt_failed", "no available capacity")
	}
	text := p.Text
	if t.bracketed() {
		text = pasteStart + text + pasteEnd
	}
	// A real program's input queue may be full, or the program gone:
	// Herdr's write fails then (try_send_bytes).
	if rc, ok := t.recv.(interface{ accepts(n int) error }); ok {
		if err := rc.accepts(len(text)); err != nil {
			return nil, schema.AgentInfo{}, herr("agent_prompt_failed", "%s", err.Error())
		}
	}
	w.lastSubmit = w.submit(pn, t, p, text, submitDelay)
	return pn, before, nil
}

// Prompt is agent.prompt without wait, as Herdr runs it: the same checks
// and errors (a *[socket.Error]), the text now and Enter
// [PromptSubmitDelay] later on the world's clock. It returns the agent as
// it was before the submission.
func (w *World) Prompt(target, text string) (schema.AgentInfo, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, info, e := w.prompt(schema.AgentPromptParams{Target: target, Text: text}, PromptSubmitDelay)
	if e != nil {
		return schema.AgentInfo{}, &socket.Error{Method: schema.MethodAgentPrompt, Code: e.code, Message: e.msg}
	}
	return info, nil
}

func agentPrompt(c *call) (any, *herdrError) {
	var p schema.AgentPromptParams
	c.params(&p)
	if p.Wait == nil {
		c.w.mu.Lock()
		_, info, e := c.prompt(p)
		sub := c.w.takeSubmission()
		c.w.mu.Unlock()
		if e == nil {
			e = c.awaitSubmission(sub)
		}
		if e != nil {
			return nil, e
		}
		return schema.ResultAgentPrompted{Type: schema.ResultTypeAgentPrompted, Agent: info}, nil
	}
	return c.promptAndWait(p)
}

func agentRename(c *call) (any, *herdrError) {
	var p schema.AgentRenameParams
	c.params(&p)
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	pn, e := w.resolveAgent(p.Target)
	if e != nil {
		return nil, e
	}
	t := pn.term
	if p.Name != nil {
		if !validAgentName(*p.Name) {
			return nil, herr("invalid_agent_name", "agent name must start with a lowercase letter and contain only lowercase letters, digits, '-' or '_' (1-32 characters)")
		}
		var clash []*pane
		for _, q := range w.panes() {
			if q != pn && q.term.isAgent() && q.term.name != nil && *q.term.name == *p.Name {
				clash = append(clash, q)
			}
		}
		if len(clash) > 0 {
			return nil, herr("agent_name_taken", "agent name %s is already used; candidates: %s", *p.Name, candidates(clash))
		}
	}
	if t.launch == launchPending || t.launch == launchBlocked {
		return nil, herr("agent_launch_pending", "agent name cannot change while startup is pending")
	}
	if t.label == nil {
		return nil, herr("agent_not_found", "agent target does not currently host an agent")
	}
	if p.Name == nil {
		t.name = nil
	} else {
		n := *p.Name
		t.name = &n
	}
	w.emitPaneUpdated(pn)
	return schema.ResultAgentInfo{Type: schema.ResultTypeAgentInfo, Agent: w.agentInfo(pn)}, nil
}

func readResult(w *World, pn *pane, source schema.ReadSource, format *schema.ReadFormat, lines *uint32, strip *bool) schema.ResultPaneRead {
	f := schema.ReadFormatText
	if format != nil {
		f = *format
	}
	doStrip := f == schema.ReadFormatText && (strip == nil || *strip)
	screen := screenOf(pn.term, source, doStrip)
	if ps := w.pickerScreen(pn.term); ps != "" {
		screen = ps
	}
	text := w.recentText(source, screen)
	truncated := false
	if lines != nil {
		ls := strings.Split(text, "\n")
		if n := int(*lines); n < len(ls) {
			ls = ls[len(ls)-n:]
			truncated = true
		}
		text = strings.Join(ls, "\n")
	}
	return schema.ResultPaneRead{Type: schema.ResultTypePaneRead, Read: schema.PaneReadResult{
		// Herdr's pane.read always answers revision 0.
		PaneID: pn.id, WorkspaceID: pn.tab.ws.id, TabID: pn.tab.id, Revision: 0,
		Source: source, Format: f, Text: text, Truncated: truncated}}
}

func agentRead(c *call) (any, *herdrError) {
	return onAgent(c, func(p *schema.AgentReadParams) string { return p.Target },
		func(w *World, pn *pane, p *schema.AgentReadParams) (any, *herdrError) {
			return readResult(w, pn, p.Source, p.Format, p.Lines, p.StripANSI), nil
		})
}
