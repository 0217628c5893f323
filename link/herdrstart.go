package link

import (
	"context"
	"time"

	"github.com/herdr-link/herdr-link/schema"
)

func (h SocketHerdr) pane(p schema.PaneInfo) Pane {
	return Pane{PaneID: p.PaneID, WorkspaceID: p.WorkspaceID, TerminalID: p.TerminalID}
}

// SplitPane implements Starter.
func (h SocketHerdr) SplitPane(ctx context.Context, anchor, direction, cwd string) (Pane, error) {
	p := schema.PaneSplitParams{TargetPaneID: &anchor, Direction: schema.SplitDirection(direction)}
	if cwd != "" {
		p.CWD = &cwd
	}
	info, err := h.Client.PaneSplit(ctx, p)
	return h.pane(info), err
}

// CreateTab implements Starter.
func (h SocketHerdr) CreateTab(ctx context.Context, workspace, cwd, label string) (Pane, error) {
	p := schema.TabCreateParams{WorkspaceID: &workspace}
	if cwd != "" {
		p.CWD = &cwd
	}
	if label != "" {
		p.Label = &label
	}
	r, err := h.Client.TabCreate(ctx, p)
	return h.pane(r.RootPane), err
}

// StartAgent implements Starter; a zero timeout leaves Herdr's default.
func (h SocketHerdr) StartAgent(ctx context.Context, paneID, name, kind string, args []string, timeout time.Duration) (Agent, error) {
	p := schema.AgentStartParams{Name: name, Kind: kind, PaneID: paneID, Args: args}
	if timeout > 0 {
		ms := uint64(timeout.Milliseconds())
		p.TimeoutMS = &ms
	}
	r, err := h.Client.AgentStart(ctx, p)
	a := r.Agent
	out := Agent{Name: deref(a.Name), Status: string(a.AgentStatus), WorkspaceID: a.WorkspaceID, PaneID: a.PaneID,
		TerminalID: a.TerminalID, Kind: deref(a.Agent), Seq: a.StateChangeSeq, LaunchPending: a.LaunchPending, InteractiveReady: a.InteractiveReady}
	fromHerdr(&out)
	return out, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ListPanes implements Starter.
func (h SocketHerdr) ListPanes(ctx context.Context, workspace string) ([]PaneRecord, error) {
	ps, err := h.Client.PaneList(ctx, workspace)
	if err != nil {
		return nil, err
	}
	out := make([]PaneRecord, len(ps))
	for i, p := range ps {
		out[i] = PaneRecord{PaneID: p.PaneID, TabID: p.TabID, WorkspaceID: p.WorkspaceID, Agent: p.Agent != nil}
	}
	return out, nil
}
