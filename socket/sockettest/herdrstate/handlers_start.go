package herdrstate

import (
	"time"

	"github.com/herdr-link/herdr-link/schema"
)

// The methods that create panes and start agents in them: pane.split,
// tab.create and agent.start, with upstream's checks in upstream's order
// (src/app/api/panes.rs, tabs.rs, src/app/agents.rs).
var startHandlers = map[string]handler{
	schema.MethodPaneSplit:  paneSplit,
	schema.MethodTabCreate:  tabCreate,
	schema.MethodAgentStart: agentStart,
}

// StartOutcome is what a program agent.start launches does next; see
// [World.SetStartOutcome].
type StartOutcome int

const (
	// StartReady: the agent is detected and becomes idle after the
	// world's start delay; the launch turns interactive_ready.
	StartReady StartOutcome = iota
	// StartNever: the agent never becomes ready; at the launch's deadline
	// Herdr drops its name.
	StartNever
	// StartBlocked: the agent stops at an interactive prompt during
	// startup (launch blocked).
	StartBlocked
	// StartExit: the program exits before it becomes interactive; the
	// pane is a plain shell again.
	StartExit
)

// SetStartOutcome sets what agents of kind do once agent.start launched
// them ("" for every kind without an outcome of its own).
func (w *World) SetStartOutcome(kind string, o StartOutcome) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.startOutcomes == nil {
		w.startOutcomes = map[string]StartOutcome{}
	}
	w.startOutcomes[kind] = o
}

// SetStartDelay sets how long a started agent takes to become ready (on
// the world's clock; zero: at once).
func (w *World) SetStartDelay(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.startDelay = d
}

// SetProgramRunner sets what starts a start program in a pane (the
// server's RunCommand); without one, start programs are not run.
func (w *World) SetProgramRunner(run func(paneID string, argv []string)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runProgram = run
}

// SetStartProgram makes agent.start of kind run argv (then the start's
// args) as a real program in the pane's pseudo-terminal (the server needs
// Programs) instead of the kind's modelled receiving end; nil argv undoes
// it. Readiness still follows the kind's start outcome.
func (w *World) SetStartProgram(kind string, argv []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.startPrograms == nil {
		w.startPrograms = map[string][]string{}
	}
	if argv == nil {
		delete(w.startPrograms, kind)
		return
	}
	w.startPrograms[kind] = append([]string(nil), argv...)
}

// Started returns the argv of every agent.start the world accepted, in
// order (the kind's executable, then the args).
func (w *World) Started() [][]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([][]string, len(w.started))
	for i, a := range w.started {
		out[i] = append([]string(nil), a...)
	}
	return out
}

// newPane makes a shell pane in t (w.mu held) and returns it.
func (w *World) newPane(t *tab, cwd string) *pane {
	t.ws.paneSeq++
	p := &pane{id: t.ws.id + ":p" + EncodeNumber(uint64(t.ws.paneSeq)), tab: t, cwd: cwd}
	p.term = w.newTerminal()
	return p
}

func paneSplit(c *call) (any, *herdrError) {
	return withParams(c, func(w *World, p *schema.PaneSplitParams) (any, *herdrError) {
		var target *pane
		switch {
		case p.TargetPaneID != nil:
			target = w.paneByTarget(*p.TargetPaneID)
		case p.WorkspaceID != nil:
			if ws := w.workspaceByArg(*p.WorkspaceID); ws != nil {
				target = w.focusedIn(ws)
			}
		default:
			target = w.focused
		}
		if target == nil {
			return nil, herr("pane_not_found", "pane not found")
		}
		cwd := target.cwd
		if p.CWD != nil {
			cwd = *p.CWD
		}
		t := target.tab
		np := w.newPane(t, cwd)
		for i, q := range t.panes {
			if q == target {
				t.panes = append(t.panes[:i+1:i+1], append([]*pane{np}, t.panes[i+1:]...)...)
				break
			}
		}
		if p.Focus {
			w.focused = np
		}
		info := w.paneInfo(np)
		w.emit(schema.EventData{PaneCreated: &schema.EventDataPaneCreated{Pane: info}})
		w.emit(schema.EventData{LayoutUpdated: &schema.EventDataLayoutUpdated{Layout: w.layout(t)}})
		w.bump()
		return schema.ResultPaneInfo{Type: schema.ResultTypePaneInfo, Pane: info}, nil
	})
}

// focusedIn is the focused pane of workspace ws (w.mu held): the world's
// focused pane when it is there, else the first pane.
func (w *World) focusedIn(ws *workspace) *pane {
	if w.focused != nil && w.focused.tab.ws == ws {
		return w.focused
	}
	for _, t := range ws.tabs {
		if len(t.panes) > 0 {
			return t.panes[0]
		}
	}
	return nil
}

func tabCreate(c *call) (any, *herdrError) {
	return withParams(c, func(w *World, p *schema.TabCreateParams) (any, *herdrError) {
		var ws *workspace
		switch {
		case p.WorkspaceID != nil:
			if ws = w.workspaceByArg(*p.WorkspaceID); ws == nil {
				return nil, herr("workspace_not_found", "workspace %s not found", *p.WorkspaceID)
			}
		case w.focused != nil:
			ws = w.focused.tab.ws
		default:
			return nil, herr("workspace_not_found", "no active workspace")
		}
		cwd := ""
		if f := w.focusedIn(ws); f != nil {
			cwd = f.cwd
		}
		if p.CWD != nil {
			cwd = *p.CWD
		}
		ws.tabSeq++
		t := &tab{id: ws.id + ":t" + EncodeNumber(uint64(ws.tabSeq)), ws: ws, label: derefOr(p.Label)}
		ws.tabs = append(ws.tabs, t)
		root := w.newPane(t, cwd)
		t.panes = []*pane{root}
		if p.Focus {
			w.focused = root
		}
		n := w.tabNumber(t)
		w.emit(schema.EventData{TabCreated: &schema.EventDataTabCreated{Tab: w.tabInfo(t, n)}})
		w.bump()
		return schema.ResultTabCreated{Type: schema.ResultTypeTabCreated, RootPane: w.paneInfo(root), Tab: w.tabInfo(t, n)}, nil
	})
}

// agentStartTimeout is agent.start's default timeout_ms.
const agentStartTimeout = 30 * time.Second

func agentStart(c *call) (any, *herdrError) {
	return withParams(c, func(w *World, p *schema.AgentStartParams) (any, *herdrError) {
		if !validAgentName(p.Name) {
			return nil, herr("invalid_agent_name", "agent name must start with a lowercase letter and contain only lowercase letters, digits, '-' or '_' (1-32 characters)")
		}
		kind, ok := knownAgent(p.Kind)
		if !ok {
			return nil, herr("unsupported_agent_kind", "unsupported interactive agent kind %s", p.Kind)
		}
		for _, a := range p.Args {
			if hasControl(a) {
				return nil, herr("invalid_agent_argument", "agent arguments cannot be encoded safely for the target shell")
			}
		}
		var clash []*pane
		for _, q := range w.panes() {
			if q.term.name != nil && *q.term.name == p.Name {
				clash = append(clash, q)
			}
		}
		if len(clash) > 0 {
			return nil, herr("agent_name_taken", "agent name %s is already used; candidates: %s", p.Name, candidates(clash))
		}
		pn := w.paneByID(p.PaneID)
		if pn == nil {
			return nil, herr("agent_pane_not_found", "agent target pane %s not found", p.PaneID)
		}
		t := pn.term
		if t.isAgent() || t.launch != launchNone {
			return nil, herr("agent_pane_busy", "agent target pane %s is not an available shell", p.PaneID)
		}
		timeout := agentStartTimeout
		if p.TimeoutMS != nil {
			timeout = time.Duration(*p.TimeoutMS) * time.Millisecond
		}
		if timeout <= 3*time.Second || timeout > 300*time.Second {
			return nil, herr("invalid_agent_timeout", "agent start timeout must be greater than 3000ms and at most 300000ms")
		}
		argv := append([]string{kind}, p.Args...)
		w.started = append(w.started, argv)
		w.launch(pn, p.Name, kind, timeout)
		if prog, ok := w.startPrograms[kind]; ok && w.runProgram != nil {
			// The runner takes the world's lock: after this answer.
			run, id, argv := w.runProgram, pn.id, append(append([]string(nil), prog...), p.Args...)
			go run(id, argv)
		}
		return schema.ResultAgentStarted{Type: schema.ResultTypeAgentStarted, Agent: w.agentInfo(pn), Argv: argv}, nil
	})
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return true
		}
	}
	return false
}

// launch begins a managed launch of kind named name in p (w.mu held):
// named at once, launch pending, the kind's model reading the terminal;
// the start outcome follows on the world's clock.
func (w *World) launch(p *pane, name, kind string, timeout time.Duration) {
	t := p.term
	n, k := name, kind
	t.name, t.label = &n, &k
	// (A launch changes no state_change_seq or revision: real 0.8.2
	// answers agent.start with both still at the pane's.)
	t.state, t.seen, t.launch, t.interactiveReady = schema.AgentStatusUnknown, true, launchPending, false
	t.recv = newModel(w, t, kind, Behaviour{}, "")
	w.emit(schema.EventData{PaneAgentDetected: &schema.EventDataPaneAgentDetected{PaneID: p.id, WorkspaceID: p.tab.ws.id, Agent: &k}})
	w.emitPaneUpdated(p)
	w.bump()
	o, ok := w.startOutcomes[kind]
	if !ok {
		o = w.startOutcomes[""]
	}
	clock := w.clock
	still := func() (*pane, bool) {
		q := w.paneOfTerm(t)
		return q, q != nil && t.launch == launchPending && t.name != nil && *t.name == name
	}
	switch o {
	case StartReady, StartBlocked, StartExit:
		clock.AfterFunc(w.startDelay, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			q, ok := still()
			if !ok {
				return
			}
			switch o {
			case StartReady:
				w.setState(q, schema.AgentStatusIdle)
			case StartBlocked:
				w.setState(q, schema.AgentStatusBlocked)
			case StartExit:
				w.exit(q)
			}
		})
	}
	// The launch deadline: a launch still pending loses its name.
	clock.AfterFunc(timeout, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if q, ok := still(); ok {
			t.name, t.launch = nil, launchNone
			w.emitPaneUpdated(q)
			w.bump()
		}
	})
}
