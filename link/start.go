package link

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/socket"
)

// The placements of a started agent.
const (
	PlaceRight = "right" // a split to the right of the anchor (the default)
	PlaceDown  = "down"  // a split below the anchor
	PlaceTab   = "tab"   // a new tab of the caller's workspace
)

// Bounds of a start's args.
const (
	MaxStartArgs     = 32
	MaxStartArgBytes = 4096
	MaxStartArgsSum  = 16 << 10
)

// DefaultStartTimeout bounds the wait for a started agent to become ready
// when Config.StartTimeout is zero (Herdr's own default for agent.start).
const DefaultStartTimeout = 30 * time.Second

// Starter is the part of Herdr's control plane that creates panes and
// starts agents in them; [SocketHerdr] implements it.
type Starter interface {
	// SplitPane is pane.split beside anchor ("right" or "down"), unfocused.
	SplitPane(ctx context.Context, anchor, direction, cwd string) (Pane, error)
	// CreateTab is tab.create in workspace, unfocused; it returns the root pane.
	CreateTab(ctx context.Context, workspace, cwd, label string) (Pane, error)
	// StartAgent is agent.start.
	StartAgent(ctx context.Context, paneID, name, kind string, args []string, timeout time.Duration) (Agent, error)
	// ListPanes is pane.list of one workspace.
	ListPanes(ctx context.Context, workspace string) ([]PaneRecord, error)
}

// PaneRecord is a pane as pane.list shows it: where it is and whether an
// agent runs in it.
type PaneRecord struct {
	PaneID, TabID, WorkspaceID string
	Agent                      bool
}

// StartRequest is what a model asks Start to do. Exactly one of Kind and
// Agent is set; Args only with Kind.
type StartRequest struct {
	Name      string
	Kind      string
	Agent     string
	Args      []string
	Placement string
	Beside    string
	Cwd       string
	Message   string
}

// StartResult is what Start returns: the new agent's name and state, and
// when a first message was given, its id and delivery as Send reports them.
type StartResult struct {
	Status   string `json:"status"`
	Agent    string `json:"agent"`
	State    string `json:"state"`
	ID       string `json:"id,omitempty"`
	Delivery string `json:"delivery,omitempty"`
}

// startPlan is a checked StartRequest.
type startPlan struct {
	StartRequest
	dir string // the resolved working directory
	// herdrName is the name the agent gets in Herdr: Name, or an alias of
	// it when Herdr has Name outside the caller's workspace.
	herdrName string
}

// Start starts a named agent in the caller's workspace: it creates a pane
// (a split beside the caller or the peer named Beside, or a new tab),
// runs agent.start in it, waits until Herdr reports the agent ready, and
// delivers Message through [Link.Send] when given. Every input is checked
// before anything is created; a failure after the pane was created closes
// that pane (and with it a tab this call created), nothing else.
func (l *Link) Start(ctx context.Context, req StartRequest) (StartResult, error) {
	plan, err := l.planStart(req)
	if err != nil {
		return StartResult{}, err
	}
	st, ok := l.cfg.Herdr.(Starter)
	if !ok {
		return StartResult{}, newErr(NotInHerdr, detailNoMethod, nil)
	}
	if err := l.admitStart(time.Now()); err != nil {
		return StartResult{}, err
	}
	hctx, cancel := l.bound(ctx)
	defer cancel()
	s, _, err := l.named(hctx)
	if err != nil {
		return StartResult{}, err
	}
	anchor := s.pane
	// Names are unique per workspace: only an agent of the caller's
	// workspace takes a name from a start (one elsewhere gets the new
	// agent an alias, in preflight).
	for _, a := range s.agents {
		if a.Name == plan.Name && s.inWorkspace(a) {
			return StartResult{}, newErr(StartNameTaken, detailNameTaken, nil)
		}
	}
	if plan.Beside != "" {
		a, ok := s.peer(plan.Beside, "")
		if !ok {
			return StartResult{}, newErr(PeerNotFound, detailPeer, nil)
		}
		anchor = a.PaneID
	}
	if plan.herdrName, err = l.preflight(hctx, st, plan); err != nil {
		return StartResult{}, err
	}
	pane, err := l.createPane(hctx, st, plan, anchor, s.ws)
	if err != nil {
		return StartResult{}, err
	}
	res, err := l.launch(ctx, hctx, st, plan, pane)
	if err != nil {
		l.rollback(ctx, pane)
		return StartResult{}, err
	}
	return res, nil
}

// paneBusyRetry is how soon agent.start is asked again while the created
// pane's shell starts.
const paneBusyRetry = 100 * time.Millisecond

// launch runs agent.start in the created pane, waits for readiness and
// sends the first message.
func (l *Link) launch(ctx, hctx context.Context, st Starter, plan startPlan, pane Pane) (StartResult, error) {
	budget := l.startTimeout()
	got, err := st.StartAgent(hctx, pane.PaneID, plan.herdrName, plan.Kind, plan.Args, herdrStartTimeout(budget))
	// The pane is this start's own: agent_pane_busy is its shell not at
	// its prompt yet (real Herdr 0.8.2 refused a pane split 0.2 s before;
	// Herdr's own `agent start` retries it likewise).
	for errors.Is(err, socket.ErrAgentPaneBusy) && hctx.Err() == nil {
		select {
		case <-hctx.Done():
		case <-time.After(paneBusyRetry):
			got, err = st.StartAgent(hctx, pane.PaneID, plan.herdrName, plan.Kind, plan.Args, herdrStartTimeout(budget))
		}
	}
	if err != nil {
		return StartResult{}, l.startError("agent.start", err)
	}
	if got.PaneID != pane.PaneID || got.WorkspaceID != pane.WorkspaceID {
		l.log().Warn("agent.start answered for another pane", "pane_id", pane.PaneID, "got_pane_id", got.PaneID)
		return StartResult{}, newErr(StartFailed, detailStartFailed, nil)
	}
	if got.Kind == "" {
		got.Kind = plan.Kind // Herdr names the kind once its detection sees the program
	}
	// Readiness has a budget of its own, not the operation deadline.
	rctx, rcancel := context.WithTimeout(ctx, budget)
	defer rcancel()
	ready, err := l.awaitStarted(rctx, got)
	if err != nil {
		return StartResult{}, err
	}
	out := StartResult{Status: "started", Agent: plan.Name, State: State(ready.Status)}
	if plan.Message == "" {
		l.log().Info("started", "agent", plan.Name, "kind", plan.Kind, "pane_id", pane.PaneID)
		return out, nil
	}
	sent, err := l.Send(ctx, SendRequest{To: plan.Name, Message: plan.Message})
	if err != nil {
		l.log().Warn("first message to a started agent failed", "agent", plan.Name, "err", err)
		return StartResult{}, newErr(StartFailed, detailStartMessage, err)
	}
	out.ID, out.Delivery = sent.ID, sent.Delivery
	l.log().Info("started", "agent", plan.Name, "kind", plan.Kind, "pane_id", pane.PaneID, "message", sent.ID)
	return out, nil
}

// herdrStartTimeout is agent.start's timeout_ms for a readiness budget:
// Herdr takes more than 3 s and at most 300 s.
func herdrStartTimeout(budget time.Duration) time.Duration {
	return min(max(budget, 3001*time.Millisecond), 300*time.Second)
}

func (l *Link) startTimeout() time.Duration {
	if l.cfg.StartTimeout > 0 {
		return min(l.cfg.StartTimeout, 300*time.Second)
	}
	return DefaultStartTimeout
}

// aliasDraws bounds the aliases a start tries for a name Herdr has
// outside the caller's workspace.
const aliasDraws = 3

// preflight asks Herdr to check the name, kind and args without a pane:
// agent.start checks them before its pane, so an answer of
// agent_pane_not_found means they passed, and nothing was created. It
// returns the name the agent gets in Herdr: the plan's, or, when Herdr
// has that name (the caller's workspace does not: Start checked), an
// alias of it ([DisplayName]), so that the answer is that of a free name.
func (l *Link) preflight(ctx context.Context, st Starter, plan startPlan) (string, error) {
	name := plan.Name
	for draw := 0; ; draw++ {
		_, err := st.StartAgent(ctx, "", name, plan.Kind, plan.Args, 0)
		switch {
		case err == nil:
			// A Herdr that accepted an empty pane id: nothing to roll back by
			// id; refuse rather than guess.
			l.log().Warn("agent.start accepted an empty pane id")
			return "", newErr(StartFailed, detailStartFailed, nil)
		case errors.Is(err, socket.ErrAgentPaneNotFound), errors.Is(err, socket.ErrInvalidAgentTimeout):
			return name, nil
		case errors.Is(err, socket.ErrAgentNameTaken) && draw < aliasDraws:
			name = newAlias(plan.Name)
			l.log().Info("start: the name is used outside this workspace; the agent gets an alias in Herdr", "alias", name)
			continue
		case errors.Is(err, socket.ErrAgentNameTaken):
			l.log().Warn("start: no free alias", "name", plan.Name, "err", err)
			return "", newErr(StartFailed, detailStartFailed, err)
		}
		return "", l.startError("agent.start (check)", err)
	}
}

// createPane makes the pane the agent starts in.
func (l *Link) createPane(ctx context.Context, st Starter, plan startPlan, anchor, ws string) (Pane, error) {
	// The panes before, to find the pane of a lost answer.
	before, err := st.ListPanes(ctx, ws)
	if err != nil {
		return Pane{}, l.fail(opLookup, "pane.list", err)
	}
	var p Pane
	if plan.Placement == PlaceTab {
		p, err = st.CreateTab(ctx, ws, plan.dir, plan.Name)
	} else {
		p, err = st.SplitPane(ctx, anchor, plan.Placement, plan.dir)
	}
	if err != nil {
		if errors.Is(err, socket.ErrAfterWrite) {
			l.log().Warn("pane creation outcome unknown: the request was written, the answer lost", "err", err)
			return Pane{}, l.findLost(ctx, st, plan, anchor, ws, before, err)
		}
		if te := l.transportErr("pane creation", err); te != nil {
			return Pane{}, te
		}
		l.log().Warn("herdr did not create a pane", "err", err)
		return Pane{}, newErr(StartFailed, detailStartNoPane, err)
	}
	if p.WorkspaceID != ws {
		// Same-workspace check on every record: never start elsewhere.
		l.log().Warn("new pane is in another workspace", "pane_id", p.PaneID, "workspace_id", p.WorkspaceID)
		l.rollback(ctx, p)
		return Pane{}, newErr(StartFailed, detailStartFailed, nil)
	}
	return p, nil
}

// findLost looks for the pane a creation whose answer was lost made: the
// one pane of ws not there before, a plain shell, in the anchor's tab (a
// split) or in a tab not there before (a new tab). Found, it is closed;
// otherwise nothing is closed, and the error says a pane may be left.
func (l *Link) findLost(ctx context.Context, st Starter, plan startPlan, anchor, ws string, before []PaneRecord, cause error) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.callTimeout())
	defer cancel()
	after, err := st.ListPanes(rctx, ws)
	if err != nil {
		return newErr(StartFailed, detailStartMaybePane, cause)
	}
	known, tabs, anchorTab := map[string]bool{}, map[string]bool{}, ""
	for _, p := range before {
		known[p.PaneID], tabs[p.TabID] = true, true
		if p.PaneID == anchor {
			anchorTab = p.TabID
		}
	}
	var fresh []PaneRecord
	for _, p := range after {
		if !known[p.PaneID] {
			fresh = append(fresh, p)
		}
	}
	switch {
	case len(fresh) == 0:
		return newErr(StartFailed, detailStartNoPane, cause)
	case len(fresh) > 1 || fresh[0].Agent:
	case plan.Placement == PlaceTab && !tabs[fresh[0].TabID], plan.Placement != PlaceTab && fresh[0].TabID == anchorTab:
		l.rollback(ctx, Pane{PaneID: fresh[0].PaneID, WorkspaceID: ws})
		return newErr(StartFailed, detailStartFailed, cause)
	}
	l.log().Warn("the pane of a lost answer cannot be told apart; nothing closed", "new_panes", len(fresh))
	return newErr(StartFailed, detailStartMaybePane, cause)
}

// rollback closes the pane this start created (a tab it created goes with
// its only pane), on a context of its own so a cancelled call still
// cleans up.
func (l *Link) rollback(ctx context.Context, p Pane) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.callTimeout())
	defer cancel()
	if err := l.cfg.Herdr.ClosePane(rctx, p.PaneID); err != nil {
		l.log().Error("rollback: the started agent's pane could not be closed", "pane_id", p.PaneID, "err", err)
		return
	}
	l.log().Info("rollback: closed the pane this start created", "pane_id", p.PaneID)
}

// transportErr is err's NOT_IN_HERDR (logged) when it is a transport or
// environment failure, else nil: refusals and lost answers are the
// start's own to classify.
func (l *Link) transportErr(method string, err error) *Error {
	if err == nil || isRefusal(err) || errors.Is(err, socket.ErrAfterWrite) {
		return nil
	}
	return l.herdrError(opLookup, method, err)
}

// startError classifies a refusal of agent.start.
func (l *Link) startError(op string, err error) error {
	if errors.Is(err, socket.ErrAfterWrite) {
		l.log().Warn(op+" outcome unknown", "err", err)
		return newErr(StartFailed, detailStartFailed, err)
	}
	if te := l.transportErr(op, err); te != nil {
		return te
	}
	l.log().Warn("herdr refused to start the agent", "op", op, "err", err)
	switch {
	case errors.Is(err, socket.ErrAgentNameTaken):
		return newErr(StartNameTaken, detailNameTaken, err)
	case errors.Is(err, socket.ErrUnsupportedAgentKind):
		return newErr(StartInputInvalid, detailStartKind, err)
	case errors.Is(err, socket.ErrInvalidAgentArgument):
		return newErr(StartInputInvalid, detailStartArgs, err)
	case errors.Is(err, socket.ErrInvalidAgentName):
		return newErr(StartInputInvalid, detailStartName, err)
	}
	return newErr(StartFailed, detailStartFailed, err)
}

// awaitStarted polls the started agent (by its pane) until Herdr reports it
// ready, as Herdr's own `agent start` does: working or unknown, or a
// pending launch, is not yet; idle or done with interactive_ready is
// ready; blocked, an exit, another occupant or a lost name fail.
func (l *Link) awaitStarted(ctx context.Context, started Agent) (Agent, error) {
	poll := l.cfg.StartPoll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	for {
		cctx, cancel := l.bound(ctx)
		a, err := l.cfg.Herdr.GetAgent(cctx, started.PaneID)
		cancel()
		if dl, ok := ctx.Deadline(); ctx.Err() != nil || err != nil && ok && !time.Now().Before(dl) {
			<-ctx.Done()
			return Agent{}, l.readyEnd(ctx)
		}
		switch {
		case err == nil && (a.TerminalID != started.TerminalID || a.Name != started.Name || a.Kind != "" && a.Kind != started.Kind):
			// (No kind yet: real Herdr 0.8.2 reports none while the
			// launch is pending, before its detection sees the program.)
			return Agent{}, newErr(StartFailed, detailStartLost, nil)
		case err == nil && a.Status == "blocked":
			return Agent{}, newErr(StartFailed, detailStartBlocked, nil)
		case err == nil && (a.Status == "idle" || a.Status == "done") && a.InteractiveReady:
			return a, nil
		case err == nil && (a.Status == "idle" || a.Status == "done") && !a.LaunchPending:
			return Agent{}, newErr(StartFailed, detailStartExited, nil)
		case errors.Is(err, socket.ErrAgentNotFound):
			return Agent{}, newErr(StartFailed, detailStartExited, err)
		case err != nil && !errors.Is(err, socket.ErrTimeout):
			if te := l.transportErr("agent.get", err); te != nil {
				return Agent{}, te
			}
		}
		t := time.NewTimer(poll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Agent{}, l.readyEnd(ctx)
		}
	}
}

// readyEnd is the error of a readiness wait whose context ended.
func (l *Link) readyEnd(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		l.log().Warn("started agent not ready in time")
		return newErr(StartFailed, detailStartTimeout, ctx.Err())
	}
	return ctxErr(ctx)
}
