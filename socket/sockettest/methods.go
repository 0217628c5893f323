package sockettest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// call is one request being handled.
type call struct {
	s   *Server
	w   *World
	req parsedRequest
	ctx context.Context // cancelled when a waiting client goes away
}

func (c *call) params(v any) {
	// parseRequest already checked the params against their type.
	_ = jsonx.Unmarshal(c.req.Params, v)
}

type handler func(*call) (any, *herdrError)

var handlers map[string]handler

// waits are the methods that hold the connection and watch for the client
// going away.
var waits = map[string]bool{schema.MethodAgentWait: true, schema.MethodAgentPrompt: true}

func init() {
	handlers = map[string]handler{
		schema.MethodAgentGet:        agentGet,
		schema.MethodAgentList:       agentList,
		schema.MethodAgentPrompt:     agentPrompt,
		schema.MethodAgentRename:     agentRename,
		schema.MethodAgentRead:       agentRead,
		schema.MethodAgentWait:       agentWait,
		schema.MethodPaneGet:         paneGet,
		schema.MethodPaneList:        paneList,
		schema.MethodPaneClose:       paneClose,
		schema.MethodPaneMove:        paneMove,
		schema.MethodPaneRead:        paneRead,
		schema.MethodWorkspaceList:   workspaceList,
		schema.MethodTabList:         tabList,
		schema.MethodSessionSnapshot: sessionSnapshot,
	}
}

// Implemented lists the methods the simulator implements; every other
// method of the schema answers not_implemented_in_simulator.
func Implemented() []string {
	out := []string{schema.MethodPing, schema.MethodServerStop, schema.MethodEventsSubscribe}
	for m := range handlers {
		out = append(out, m)
	}
	return out
}

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
	var p schema.AgentTarget
	c.params(&p)
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	pn, e := c.w.resolveAgent(p.Target)
	if e != nil {
		return nil, e
	}
	return schema.ResultAgentInfo{Type: schema.ResultTypeAgentInfo, Agent: c.w.agentInfo(pn)}, nil
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
	t.prompts = append(t.prompts, p.Text)
	w.write(t, text)
	term := t
	w.clock.AfterFunc(submitDelay, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if pn.term == term && w.paneByTarget(pn.id) == pn {
			enter := "\r"
			if term.recv != nil {
				enter = term.recv.enterKey()
			}
			w.write(term, enter)
		}
	})
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
		defer c.w.mu.Unlock()
		_, info, e := c.prompt(p)
		if e != nil {
			return nil, e
		}
		return schema.ResultAgentPrompted{Type: schema.ResultTypeAgentPrompted, Agent: info}, nil
	}
	return c.promptAndWait(p)
}

// promptAndWait is agent.prompt with wait (Herdr's server-side wait).
func (c *call) promptAndWait(p schema.AgentPromptParams) (any, *herdrError) {
	w := c.w
	start := time.Now()
	w.mu.Lock()
	if _, e := w.resolveAgent(p.Target); e != nil { // agent.get runs first
		w.mu.Unlock()
		return nil, e
	}
	pn, _, e := c.prompt(p)
	if e != nil {
		w.mu.Unlock()
		return nil, e
	}
	pin := pinAgent(pn, p.Target != pn.id)
	term := pn.term
	seq0 := term.seq
	status := term.status()
	w.mu.Unlock()

	var timeout time.Duration
	hasTimeout := p.Wait.TimeoutMS != nil
	if hasTimeout {
		timeout = time.Duration(*p.Wait.TimeoutMS) * time.Millisecond
	}
	if status != schema.AgentStatusWorking {
		gate := c.s.EffectTimeout
		if hasTimeout && timeout < gate {
			gate = timeout
		}
		ok, e := c.waitFor(start.Add(gate), func() (bool, *herdrError) {
			if pin.gone(w) {
				return false, errNotRunning()
			}
			return term.seq > seq0, nil
		})
		if e != nil {
			return nil, e
		}
		if !ok {
			if hasTimeout && *p.Wait.TimeoutMS <= uint64(c.s.EffectTimeout/time.Millisecond) {
				return nil, herr("timeout", "timed out waiting for agent status")
			}
			w.mu.Lock()
			st, sq := term.status(), term.seq
			w.mu.Unlock()
			return nil, herr("agent_prompt_stalled", "agent prompt produced no observed state change within %d ms; status is %s and state_change_seq remained %d",
				c.s.EffectTimeout.Milliseconds(), st, sq)
		}
	}
	var deadline time.Time
	if hasTimeout {
		deadline = start.Add(timeout)
	}
	final, e := c.waitStatus(pin, p.Wait.Until, deadline, false)
	if e != nil {
		return nil, e
	}
	return schema.ResultAgentPrompted{Type: schema.ResultTypeAgentPrompted, Agent: final}, nil
}

// pinned is the agent a wait follows (Herdr pins it by terminal, agent
// label, and name when the target was a name).
type pinned struct {
	pn                  *pane
	term                *terminal
	label, name, paneID string
	byName              bool
	cursor              uint64 // hub sequence when the wait started
}

func pinAgent(pn *pane, byName bool) pinned {
	return pinned{pn: pn, term: pn.term, label: derefOr(pn.term.label), name: derefOr(pn.term.name), paneID: pn.id, byName: byName}
}

// pinAt is pinAgent that also remembers the hub position (w.mu held), for
// waits that accept transient statuses.
func (w *World) pinAt(pn *pane, byName bool) pinned {
	p := pinAgent(pn, byName)
	p.cursor = w.events.seq
	return p
}

// gone reports (w.mu held) whether the pane closed or moved (its id
// changed), or its occupant exited, was replaced or lost its name.
func (p pinned) gone(w *World) bool {
	if p.pn.id != p.paneID || w.paneByID(p.paneID) != p.pn || p.pn.term != p.term || derefOr(p.term.label) != p.label {
		return true
	}
	return p.byName && derefOr(p.term.name) != p.name
}

func errNotRunning() *herdrError {
	return herr("agent_not_running", "agent is no longer running in the target pane")
}

// defaultUntil is the status set waits use when the request names none.
var defaultUntil = []schema.AgentStatus{schema.AgentStatusIdle, schema.AgentStatusDone, schema.AgentStatusBlocked}

// waitStatus waits until the pinned agent's status is in until (default:
// idle, done, blocked), the deadline (zero: none) passes, or it is gone.
//
// With transient (agent.wait), a status the agent passed through since the
// wait started counts too, as Herdr reads it from the event hub: the reply
// is the current record carrying that status.
func (c *call) waitStatus(p pinned, until []schema.AgentStatus, deadline time.Time, transient bool) (schema.AgentInfo, *herdrError) {
	if len(until) == 0 {
		until = defaultUntil
	}
	var info schema.AgentInfo
	ok, e := c.waitFor(deadline, func() (bool, *herdrError) {
		if p.gone(c.w) {
			return false, errNotRunning()
		}
		if transient {
			var matched *schema.AgentStatus
			for _, r := range c.w.statusEventsAfter(p.paneID, p.cursor) {
				p.cursor = r.seq
				if inStatuses(r.status.AgentStatus, until) {
					st := r.status.AgentStatus
					matched = &st
				}
			}
			if matched != nil {
				info = c.w.agentInfo(p.pn)
				info.AgentStatus = *matched
				return true, nil
			}
		}
		if inStatuses(p.term.status(), until) {
			info = c.w.agentInfo(p.pn)
			return true, nil
		}
		return false, nil
	})
	if e != nil {
		return info, e
	}
	if !ok {
		return info, herr("timeout", "timed out waiting for agent status")
	}
	return info, nil
}

func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func inStatuses(s schema.AgentStatus, l []schema.AgentStatus) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// waitFor polls check (under w.mu) every Tick until it reports done, an
// error, the deadline (zero: none) or the client leaving. ok is false on
// deadline or departure.
func (c *call) waitFor(deadline time.Time, check func() (bool, *herdrError)) (bool, *herdrError) {
	for {
		c.w.mu.Lock()
		done, e := check()
		c.w.mu.Unlock()
		if e != nil || done {
			return done, e
		}
		wait := c.s.Tick
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return false, nil
			}
			if left < wait {
				wait = left
			}
		}
		select {
		case <-c.ctx.Done():
			return false, nil
		case <-c.s.done:
			return false, herr("server_unavailable", "server is shutting down")
		case <-time.After(wait):
		}
	}
}

func agentWait(c *call) (any, *herdrError) {
	var p schema.AgentWaitParams
	c.params(&p)
	w := c.w
	w.mu.Lock()
	pn, e := w.resolveAgent(p.Target)
	if e != nil {
		w.mu.Unlock()
		return nil, e
	}
	pin := w.pinAt(pn, false)
	w.mu.Unlock()
	var deadline time.Time
	if p.TimeoutMS != nil {
		deadline = time.Now().Add(time.Duration(*p.TimeoutMS) * time.Millisecond)
	}
	info, e := c.waitStatus(pin, p.Until, deadline, true)
	if e != nil {
		return nil, e
	}
	return schema.ResultAgentInfo{Type: schema.ResultTypeAgentInfo, Agent: info}, nil
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
	text := screenOf(pn.term, source, doStrip)
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
	var p schema.AgentReadParams
	c.params(&p)
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	pn, e := c.w.resolveAgent(p.Target)
	if e != nil {
		return nil, e
	}
	return readResult(c.w, pn, p.Source, p.Format, p.Lines, p.StripANSI), nil
}

func paneRead(c *call) (any, *herdrError) {
	var p schema.PaneReadParams
	c.params(&p)
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	pn, e := c.w.paneArg(p.PaneID)
	if e != nil {
		return nil, e
	}
	return readResult(c.w, pn, p.Source, p.Format, p.Lines, p.StripANSI), nil
}

// paneArg resolves a pane.* pane_id argument (w.mu held): a current id
// or a moved-pane alias, else pane_not_found.
func (w *World) paneArg(id string) (*pane, *herdrError) {
	pn := w.paneByTarget(id)
	if pn == nil {
		return nil, herr("pane_not_found", "pane %s not found", id)
	}
	return pn, nil
}

func paneGet(c *call) (any, *herdrError) {
	var p schema.PaneTarget
	c.params(&p)
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	pn, e := c.w.paneArg(p.PaneID)
	if e != nil {
		return nil, e
	}
	return schema.ResultPaneInfo{Type: schema.ResultTypePaneInfo, Pane: c.w.paneInfo(pn)}, nil
}

// workspaceFilter resolves an optional workspace_id argument (w.mu held):
// nil for none, workspace_not_found when it does not resolve.
func (w *World) workspaceFilter(id *string) (*workspace, *herdrError) {
	if id == nil {
		return nil, nil
	}
	ws := w.workspaceByArg(*id)
	if ws == nil {
		return nil, herr("workspace_not_found", "workspace %s not found", *id)
	}
	return ws, nil
}

func paneList(c *call) (any, *herdrError) {
	var p schema.PaneListParams
	c.params(&p)
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	only, e := c.w.workspaceFilter(p.WorkspaceID)
	if e != nil {
		return nil, e
	}
	panes := []schema.PaneInfo{}
	for _, pn := range c.w.panes() {
		if only == nil || pn.tab.ws == only {
			panes = append(panes, c.w.paneInfo(pn))
		}
	}
	return schema.ResultPaneList{Type: schema.ResultTypePaneList, Panes: panes}, nil
}

func paneClose(c *call) (any, *herdrError) {
	var p schema.PaneTarget
	c.params(&p)
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	pn, e := c.w.paneArg(p.PaneID)
	if e != nil {
		return nil, e
	}
	c.w.closePane(pn)
	return schema.ResultOk{Type: schema.ResultTypeOk}, nil
}

func paneMove(c *call) (any, *herdrError) {
	var p schema.PaneMoveParams
	c.params(&p)
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	pn := w.paneByTarget(p.PaneID)
	if pn == nil {
		return nil, herr("pane_not_found", "source pane not found")
	}
	var dst *tab
	d := p.Destination
	switch {
	case d.Tab != nil:
		if dst = w.tabByID(d.Tab.TabID); dst == nil {
			return nil, herr("tab_not_found", "tab %s not found", d.Tab.TabID)
		}
		if d.Tab.TargetPaneID != nil && w.paneByTarget(*d.Tab.TargetPaneID) == nil {
			return nil, herr("target_pane_not_found", "target pane %s not found", *d.Tab.TargetPaneID)
		}
	case d.NewTab != nil:
		ws := pn.tab.ws
		if d.NewTab.WorkspaceID != nil {
			if ws = w.workspaceByArg(*d.NewTab.WorkspaceID); ws == nil {
				return nil, herr("workspace_not_found", "workspace %s not found", *d.NewTab.WorkspaceID)
			}
		}
		ws.tabSeq++
		dst = &tab{id: ws.id + ":t" + EncodeNumber(uint64(ws.tabSeq)), ws: ws, label: derefOr(d.NewTab.Label)}
		ws.tabs = append(ws.tabs, dst)
	case d.NewWorkspace != nil:
		w.wsSeq++
		id := "w" + EncodeNumber(uint64(w.wsSeq))
		for w.workspaceByArg(id) != nil {
			w.wsSeq++
			id = "w" + EncodeNumber(uint64(w.wsSeq))
		}
		ws := &workspace{id: id, label: derefOr(d.NewWorkspace.Label), tabSeq: 1}
		if ws.label == "" {
			ws.label = id
		}
		dst = &tab{id: id + ":t1", ws: ws, label: derefOr(d.NewWorkspace.TabLabel)}
		ws.tabs = []*tab{dst}
		w.workspaces = append(w.workspaces, ws)
	default:
		return nil, herr("invalid_request", "unsupported pane.move destination")
	}
	// A new container holds no pane yet; its info is taken after the move.
	res := w.movePane(pn, dst, d.NewTab != nil, d.NewWorkspace != nil)
	return schema.ResultPaneMove{Type: schema.ResultTypePaneMove, MoveResult: res}, nil
}

func workspaceList(c *call) (any, *herdrError) {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	out := []schema.WorkspaceInfo{}
	for i, ws := range c.w.workspaces {
		out = append(out, c.w.workspaceInfo(ws, i+1))
	}
	return schema.ResultWorkspaceList{Type: schema.ResultTypeWorkspaceList, Workspaces: out}, nil
}

func tabList(c *call) (any, *herdrError) {
	var p schema.TabListParams
	c.params(&p)
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	only, e := c.w.workspaceFilter(p.WorkspaceID)
	if e != nil {
		return nil, e
	}
	out := []schema.TabInfo{}
	for _, ws := range c.w.workspaces {
		if only != nil && ws != only {
			continue
		}
		for i, t := range ws.tabs {
			out = append(out, c.w.tabInfo(t, i+1))
		}
	}
	return schema.ResultTabList{Type: schema.ResultTypeTabList, Tabs: out}, nil
}

func sessionSnapshot(c *call) (any, *herdrError) {
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	snap := schema.SessionSnapshot{Version: c.s.Version, Protocol: c.s.protocol.Load(),
		Workspaces: []schema.WorkspaceInfo{}, Tabs: []schema.TabInfo{}, Panes: []schema.PaneInfo{},
		Layouts: []schema.PaneLayoutSnapshot{}, Agents: []schema.AgentInfo{}}
	if f := w.focused; f != nil {
		wid, tid, pid := f.tab.ws.id, f.tab.id, f.id
		snap.FocusedWorkspaceID, snap.FocusedTabID, snap.FocusedPaneID = &wid, &tid, &pid
	}
	for i, ws := range w.workspaces {
		snap.Workspaces = append(snap.Workspaces, w.workspaceInfo(ws, i+1))
		for j, t := range ws.tabs {
			snap.Tabs = append(snap.Tabs, w.tabInfo(t, j+1))
			snap.Layouts = append(snap.Layouts, w.layout(t))
			for _, p := range t.panes {
				snap.Panes = append(snap.Panes, w.paneInfo(p))
				if p.term.isAgent() {
					snap.Agents = append(snap.Agents, w.agentInfo(p))
				}
			}
		}
	}
	return schema.ResultSessionSnapshot{Type: schema.ResultTypeSessionSnapshot, Snapshot: snap}, nil
}

// --- events.subscribe ---

type subState struct {
	plainKind string // snake_case kind for plain subscriptions
	cursor    uint64
	paneID    string // for pane.agent_status_changed
	filter    *schema.AgentStatus
	last      schema.AgentStatus
	pane      *pane
	initial   []byte // the first event of a filter already matched
}

// statusLine is the subscription line of a status change.
func statusLine(ev schema.PaneAgentStatusChangedEvent) []byte {
	data, _ := jsonx.Marshal(ev)
	return sortedEnvelope(schema.SubscriptionTagPaneAgentStatusChanged, data)
}

func (w *World) statusEvent(p *pane) schema.PaneAgentStatusChangedEvent {
	m := p.term.meta
	return schema.PaneAgentStatusChangedEvent{PaneID: p.id, WorkspaceID: p.tab.ws.id, AgentStatus: p.term.status(), Agent: p.term.label,
		Title: m.title, DisplayAgent: m.displayAgent, StateLabels: m.stateLabels}
}

// pollStatus is one tick of a pane.agent_status_changed subscription, as
// Herdr polls it (w.mu held): the pane's status events in the hub, one per
// tick, each one delivered (filtered on the wanted status); the initial
// event of a filter the pane already matched when nothing happened since;
// a pane snapshot when the hub has nothing.
func (w *World) pollStatus(st *subState) []byte {
	saw := false
	for _, r := range w.statusEventsAfter(st.paneID, st.cursor) {
		st.cursor = r.seq
		saw = true
		st.last = r.status.AgentStatus
		if st.filter != nil && *st.filter != r.status.AgentStatus {
			continue
		}
		st.initial = nil
		return statusLine(schema.PaneAgentStatusChangedEvent{PaneID: r.status.PaneID, WorkspaceID: r.status.WorkspaceID,
			AgentStatus: r.status.AgentStatus, Agent: r.status.Agent, Title: r.status.Title, DisplayAgent: r.status.DisplayAgent,
			StateLabels: r.status.StateLabels})
	}
	st.cursor = w.events.seq
	if saw {
		st.initial = nil
	} else if st.initial != nil {
		line := st.initial
		st.initial = nil
		return line
	}
	if w.paneByTarget(st.paneID) != st.pane {
		return nil
	}
	cur := st.pane.term.status()
	if cur == st.last {
		return nil
	}
	st.last = cur
	if st.filter != nil && *st.filter != cur {
		return nil
	}
	return statusLine(w.statusEvent(st.pane))
}

// specialPaneKinds are the subscriptions that probe a pane first.
var specialPaneKinds = map[string]bool{
	schema.SubscriptionTagPaneAgentStatusChanged: true,
	schema.SubscriptionTagPaneOutputMatched:      true,
	schema.SubscriptionTagPaneScrollChanged:      true,
}

func subPaneID(sub schema.Subscription) string {
	switch {
	case sub.PaneAgentStatusChanged != nil:
		return sub.PaneAgentStatusChanged.PaneID
	case sub.PaneOutputMatched != nil:
		return sub.PaneOutputMatched.PaneID
	case sub.PaneScrollChanged != nil:
		return sub.PaneScrollChanged.PaneID
	}
	return ""
}

func (s *Server) subscribe(c net.Conn, req parsedRequest) {
	var p schema.EventsSubscribeParams
	_ = jsonx.Unmarshal(req.Params, &p)
	w := s.World
	var subs []*subState
	w.mu.Lock()
	for i, sub := range p.Subscriptions {
		tag := sub.Tag()
		st := &subState{}
		if specialPaneKinds[tag] {
			pid := subPaneID(sub)
			pn := w.paneByTarget(pid)
			if pn == nil {
				w.mu.Unlock()
				s.reply(c, errorLine(fmt.Sprintf("%s:sub:%d:probe", req.ID, i), "pane_not_found", "pane "+pid+" not found"))
				return
			}
			if tag != schema.SubscriptionTagPaneAgentStatusChanged {
				continue // accepted, but the simulator produces no such events
			}
			st.paneID, st.pane, st.filter, st.last, st.cursor = pn.id, pn, sub.PaneAgentStatusChanged.AgentStatus, pn.term.status(), w.events.seq
			if st.filter != nil && *st.filter == st.last {
				st.initial = statusLine(w.statusEvent(pn))
			}
		} else {
			st.plainKind = strings.ReplaceAll(tag, ".", "_")
		}
		subs = append(subs, st)
	}
	w.mu.Unlock()
	s.reply(c, resultLine(req.ID, schema.ResultSubscriptionStarted{Type: schema.ResultTypeSubscriptionStarted}))
	gone := s.watchGone(c)
	ticker := time.NewTicker(s.Tick)
	defer ticker.Stop()
	for {
		select {
		case <-gone:
			return
		case <-s.done:
			return
		case <-ticker.C:
		}
		var lines [][]byte
		w.mu.Lock()
		for _, st := range subs {
			if st.plainKind != "" {
				if r, ok := w.eventAfter(st.plainKind, st.cursor); ok {
					st.cursor = r.seq
					lines = append(lines, r.line)
				}
				continue
			}
			if line := w.pollStatus(st); line != nil {
				lines = append(lines, line)
			}
		}
		w.mu.Unlock()
		for _, l := range lines {
			s.check(l)
			_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Write(append(l, '\n')); err != nil {
				return
			}
		}
	}
}
