package start

import (
	"context"
	"errors"
	"time"

	"github.com/herdr-link/herdr-link/link/deliver"
	"github.com/herdr-link/herdr-link/link/proto"
	"github.com/herdr-link/herdr-link/socket"
)

// startPlan is a checked Request.
type startPlan struct {
	Request
	dir string // the resolved working directory
	// herdrName is the name the agent gets in Herdr: Name, or an alias of
	// it when Herdr has Name outside the caller's workspace.
	herdrName string
}

// Start starts a named agent in the caller's workspace: it creates a pane
// (a split beside the caller or the peer named Beside, or a new tab),
// runs agent.start in it, waits until Herdr reports the agent ready, and
// delivers Message through [Ports.Send] when given. Every input is checked
// before anything is created; a failure after the pane was created closes
// that pane (and with it a tab this call created), nothing else.
func (l *Launcher) Start(ctx context.Context, req Request) (Result, error) {
	plan, err := l.check(req)
	if err != nil {
		return Result{}, err
	}
	st, ok := l.cfg.Herdr.(Starter)
	if !ok {
		return Result{}, l.cfg.Ports.NoStarter()
	}
	if err := l.admit(time.Now()); err != nil {
		return Result{}, err
	}
	hctx, cancel := l.bound(ctx)
	defer cancel()
	// Names are unique per workspace: only an agent of the caller's
	// workspace takes a name from a start (one elsewhere gets the new
	// agent an alias, in preflight).
	place, err := l.cfg.Ports.Place(hctx, plan.Name, plan.Beside)
	if err != nil {
		return Result{}, err
	}
	if place.Taken {
		return Result{}, newErr(proto.StartNameTaken, detailNameTaken, nil)
	}
	anchor := place.Anchor
	if plan.herdrName, err = l.preflight(hctx, st, plan); err != nil {
		return Result{}, err
	}
	pane, err := l.createPane(hctx, st, plan, anchor, place.Workspace)
	if err != nil {
		return Result{}, err
	}
	res, err := l.launch(ctx, hctx, st, plan, pane)
	if err != nil {
		l.rollback(ctx, pane)
		return Result{}, err
	}
	return res, nil
}

// paneBusyRetry is how soon agent.start is asked again while the created
// pane's shell starts.
const paneBusyRetry = 100 * time.Millisecond

// launch runs agent.start in the created pane, waits for readiness and
// sends the first message.
func (l *Launcher) launch(ctx, hctx context.Context, st Starter, plan startPlan, pane Pane) (Result, error) {
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
		return Result{}, l.startError("agent.start", err)
	}
	if got.PaneID != pane.PaneID || got.WorkspaceID != pane.WorkspaceID {
		l.log().Warn("agent.start answered for another pane", "pane_id", pane.PaneID, "got_pane_id", got.PaneID)
		return Result{}, newErr(proto.StartFailed, detailStartFailed, nil)
	}
	if got.Kind == "" {
		got.Kind = plan.Kind // Herdr names the kind once its detection sees the program
	}
	// Readiness has a budget of its own, not the operation deadline.
	rctx, rcancel := context.WithTimeout(ctx, budget)
	defer rcancel()
	ready, err := l.awaitStarted(rctx, got)
	if err != nil {
		return Result{}, err
	}
	out := Result{Status: "started", Agent: plan.Name, State: deliver.State(ready.Status)}
	if plan.Message == "" {
		l.log().Info("started", "agent", plan.Name, "kind", plan.Kind, "pane_id", pane.PaneID)
		return out, nil
	}
	id, delivery, err := l.cfg.Ports.Send(ctx, plan.Name, plan.Message)
	if err != nil {
		l.log().Warn("first message to a started agent failed", "agent", plan.Name, "err", err)
		return Result{}, newErr(proto.StartFailed, detailStartMessage, err)
	}
	out.ID, out.Delivery = id, delivery
	l.log().Info("started", "agent", plan.Name, "kind", plan.Kind, "pane_id", pane.PaneID, "message", id)
	return out, nil
}

// herdrStartTimeout is agent.start's timeout_ms for a readiness budget:
// Herdr takes more than 3 s and at most 300 s.
func herdrStartTimeout(budget time.Duration) time.Duration {
	return min(max(budget, 3001*time.Millisecond), 300*time.Second)
}

func (l *Launcher) startTimeout() time.Duration {
	if l.cfg.Timeout > 0 {
		return min(l.cfg.Timeout, 300*time.Second)
	}
	return DefaultTimeout
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
func (l *Launcher) preflight(ctx context.Context, st Starter, plan startPlan) (string, error) {
	name := plan.Name
	for draw := 0; ; draw++ {
		_, err := st.StartAgent(ctx, "", name, plan.Kind, plan.Args, 0)
		switch {
		case err == nil:
			// A Herdr that accepted an empty pane id: nothing to roll back by
			// id; refuse rather than guess.
			l.log().Warn("agent.start accepted an empty pane id")
			return "", newErr(proto.StartFailed, detailStartFailed, nil)
		case errors.Is(err, socket.ErrAgentPaneNotFound), errors.Is(err, socket.ErrInvalidAgentTimeout):
			return name, nil
		case errors.Is(err, socket.ErrAgentNameTaken) && draw < aliasDraws:
			name = proto.NewAlias(plan.Name)
			l.log().Info("start: the name is used outside this workspace; the agent gets an alias in Herdr", "alias", name)
			continue
		case errors.Is(err, socket.ErrAgentNameTaken):
			l.log().Warn("start: no free alias", "name", plan.Name, "err", err)
			return "", newErr(proto.StartFailed, detailStartFailed, err)
		}
		return "", l.startError("agent.start (check)", err)
	}
}

// createPane makes the pane the agent starts in.
func (l *Launcher) createPane(ctx context.Context, st Starter, plan startPlan, anchor, ws string) (Pane, error) {
	// The panes before, to find the pane of a lost answer.
	before, err := st.ListPanes(ctx, ws)
	if err != nil {
		return Pane{}, l.cfg.Ports.HerdrFailed("pane.list", err)
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
		return Pane{}, newErr(proto.StartFailed, detailStartNoPane, err)
	}
	if p.WorkspaceID != ws {
		// Same-workspace check on every record: never start elsewhere.
		l.log().Warn("new pane is in another workspace", "pane_id", p.PaneID, "workspace_id", p.WorkspaceID)
		l.rollback(ctx, p)
		return Pane{}, newErr(proto.StartFailed, detailStartFailed, nil)
	}
	return p, nil
}

// findLost looks for the pane a creation whose answer was lost made: the
// one pane of ws not there before, a plain shell, in the anchor's tab (a
// split) or in a tab not there before (a new tab). Found, it is closed;
// otherwise nothing is closed, and the error says a pane may be left.
func (l *Launcher) findLost(ctx context.Context, st Starter, plan startPlan, anchor, ws string, before []PaneRecord, cause error) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.CallTimeout)
	defer cancel()
	after, err := st.ListPanes(rctx, ws)
	if err != nil {
		return newErr(proto.StartFailed, detailStartMaybePane, cause)
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
		return newErr(proto.StartFailed, detailStartNoPane, cause)
	case len(fresh) > 1 || fresh[0].Agent:
	case plan.Placement == PlaceTab && !tabs[fresh[0].TabID], plan.Placement != PlaceTab && fresh[0].TabID == anchorTab:
		l.rollback(ctx, Pane{PaneID: fresh[0].PaneID, WorkspaceID: ws})
		return newErr(proto.StartFailed, detailStartFailed, cause)
	}
	l.log().Warn("the pane of a lost answer cannot be told apart; nothing closed", "new_panes", len(fresh))
	return newErr(proto.StartFailed, detailStartMaybePane, cause)
}

// rollback closes the pane this start created (a tab it created goes with
// its only pane), on a context of its own so a cancelled call still
// cleans up.
func (l *Launcher) rollback(ctx context.Context, p Pane) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.CallTimeout)
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
func (l *Launcher) transportErr(method string, err error) error {
	if err == nil || l.cfg.Ports.Refusal(err) || errors.Is(err, socket.ErrAfterWrite) {
		return nil
	}
	return l.cfg.Ports.HerdrFailed(method, err)
}

// startError classifies a refusal of agent.start.
func (l *Launcher) startError(op string, err error) error {
	if errors.Is(err, socket.ErrAfterWrite) {
		l.log().Warn(op+" outcome unknown", "err", err)
		return newErr(proto.StartFailed, detailStartFailed, err)
	}
	if te := l.transportErr(op, err); te != nil {
		return te
	}
	l.log().Warn("herdr refused to start the agent", "op", op, "err", err)
	switch {
	case errors.Is(err, socket.ErrAgentNameTaken):
		return newErr(proto.StartNameTaken, detailNameTaken, err)
	case errors.Is(err, socket.ErrUnsupportedAgentKind):
		return newErr(proto.StartInputInvalid, detailStartKind, err)
	case errors.Is(err, socket.ErrInvalidAgentArgument):
		return newErr(proto.StartInputInvalid, detailStartArgs, err)
	case errors.Is(err, socket.ErrInvalidAgentName):
		return newErr(proto.StartInputInvalid, detailStartName, err)
	}
	return newErr(proto.StartFailed, detailStartFailed, err)
}

// awaitStarted polls the started agent (by its pane) until Herdr reports it
// ready, as Herdr's own `agent start` does: working or unknown, or a
// pending launch, is not yet; idle or done with interactive_ready is
// ready; blocked, an exit, another occupant or a lost name fail.
func (l *Launcher) awaitStarted(ctx context.Context, started deliver.Agent) (deliver.Agent, error) {
	poll := l.cfg.Poll
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	for {
		cctx, cancel := l.bound(ctx)
		a, err := l.cfg.Herdr.GetAgent(cctx, started.PaneID)
		cancel()
		if dl, ok := ctx.Deadline(); ctx.Err() != nil || err != nil && ok && !time.Now().Before(dl) {
			<-ctx.Done()
			return deliver.Agent{}, l.readyEnd(ctx)
		}
		switch {
		case err == nil && (a.TerminalID != started.TerminalID || a.Name != started.Name || a.Kind != "" && a.Kind != started.Kind):
			// (No kind yet: real Herdr 0.8.2 reports none while the
			// launch is pending, before its detection sees the program.)
			return deliver.Agent{}, newErr(proto.StartFailed, detailStartLost, nil)
		case err == nil && a.Status == "blocked":
			return deliver.Agent{}, newErr(proto.StartFailed, detailStartBlocked, nil)
		case err == nil && (a.Status == "idle" || a.Status == "done") && a.InteractiveReady:
			return a, nil
		case err == nil && (a.Status == "idle" || a.Status == "done") && !a.LaunchPending:
			return deliver.Agent{}, newErr(proto.StartFailed, detailStartExited, nil)
		case errors.Is(err, socket.ErrAgentNotFound):
			return deliver.Agent{}, newErr(proto.StartFailed, detailStartExited, err)
		case err != nil && !errors.Is(err, socket.ErrTimeout):
			if te := l.transportErr("agent.get", err); te != nil {
				return deliver.Agent{}, te
			}
		}
		t := time.NewTimer(poll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return deliver.Agent{}, l.readyEnd(ctx)
		}
	}
}

// readyEnd is the error of a readiness wait whose context ended.
func (l *Launcher) readyEnd(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		l.log().Warn("started agent not ready in time")
		return newErr(proto.StartFailed, detailStartTimeout, ctx.Err())
	}
	return l.cfg.Ports.Ended(ctx)
}
