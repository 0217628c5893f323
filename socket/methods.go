package socket

import (
	"context"

	"github.com/herdr-link/herdr-link/schema"
)

// typed performs a checked call and decodes a result variant.
func typed[T any](ctx context.Context, c *Client, method string, params any, wantTag string, tag func(*T) *string) (T, error) {
	var v T
	if err := c.ensureProtocol(ctx); err != nil {
		return v, err
	}
	if err := c.call(ctx, method, params, &v); err != nil {
		return v, err
	}
	return v, checkType(method, *tag(&v), wantTag)
}

// AgentGet resolves target (a current pane id hosting an agent, or an exact
// agent name) to its agent. Herdr answers agent_not_found
// ([ErrAgentNotFound]) or agent_target_ambiguous.
func (c *Client) AgentGet(ctx context.Context, target string) (schema.AgentInfo, error) {
	r, err := typed(ctx, c, schema.MethodAgentGet, schema.AgentTarget{Target: target}, schema.ResultTypeAgentInfo,
		func(r *schema.ResultAgentInfo) *string { return &r.Type })
	return r.Agent, err
}

// AgentList lists every agent of the server, named or not, in workspace,
// tab and layout order. Plain shells are not agents.
func (c *Client) AgentList(ctx context.Context) ([]schema.AgentInfo, error) {
	r, err := typed(ctx, c, schema.MethodAgentList, schema.EmptyParams{}, schema.ResultTypeAgentList,
		func(r *schema.ResultAgentList) *string { return &r.Type })
	return r.Agents, err
}

// AgentPrompt types p.Text into the agent's pane and submits it. Without
// p.Wait it returns as soon as the text is written, with the agent as it
// was before submission. Refusals: empty_agent_prompt, agent_not_found,
// agent_blocked (nothing was written), agent_not_ready, agent_prompt_failed.
func (c *Client) AgentPrompt(ctx context.Context, p schema.AgentPromptParams) (schema.AgentInfo, error) {
	r, err := typed(ctx, c, schema.MethodAgentPrompt, p, schema.ResultTypeAgentPrompted,
		func(r *schema.ResultAgentPrompted) *string { return &r.Type })
	return r.Agent, err
}

// AgentRename sets the agent name of target, or clears it when name is nil.
func (c *Client) AgentRename(ctx context.Context, target string, name *string) (schema.AgentInfo, error) {
	r, err := typed(ctx, c, schema.MethodAgentRename, schema.AgentRenameParams{Target: target, Name: name}, schema.ResultTypeAgentInfo,
		func(r *schema.ResultAgentInfo) *string { return &r.Type })
	return r.Agent, err
}

// AgentRead reads the screen or scrollback of an agent's pane.
func (c *Client) AgentRead(ctx context.Context, p schema.AgentReadParams) (schema.PaneReadResult, error) {
	r, err := typed(ctx, c, schema.MethodAgentRead, p, schema.ResultTypePaneRead,
		func(r *schema.ResultPaneRead) *string { return &r.Type })
	return r.Read, err
}

// PaneClose closes a pane (and with it its agent and the agent's name).
// paneID may be a canonical id or an alias Herdr still accepts.
func (c *Client) PaneClose(ctx context.Context, paneID string) error {
	_, err := typed(ctx, c, schema.MethodPaneClose, schema.PaneTarget{PaneID: paneID}, schema.ResultTypeOk,
		func(r *schema.ResultOk) *string { return &r.Type })
	return err
}

// PaneGet returns one pane. paneID may be an alias of a moved pane; the
// result carries the pane's current id.
func (c *Client) PaneGet(ctx context.Context, paneID string) (schema.PaneInfo, error) {
	r, err := typed(ctx, c, schema.MethodPaneGet, schema.PaneTarget{PaneID: paneID}, schema.ResultTypePaneInfo,
		func(r *schema.ResultPaneInfo) *string { return &r.Type })
	return r.Pane, err
}

// PaneList lists the panes of one workspace, or of all when workspaceID is
// empty.
func (c *Client) PaneList(ctx context.Context, workspaceID string) ([]schema.PaneInfo, error) {
	p := schema.PaneListParams{}
	if workspaceID != "" {
		p.WorkspaceID = &workspaceID
	}
	r, err := typed(ctx, c, schema.MethodPaneList, p, schema.ResultTypePaneList,
		func(r *schema.ResultPaneList) *string { return &r.Type })
	return r.Panes, err
}

// PaneMove moves a pane to another tab or workspace. A move to another
// workspace gives the pane a new id; the old one stays a pane.* alias.
func (c *Client) PaneMove(ctx context.Context, p schema.PaneMoveParams) (schema.PaneMoveResult, error) {
	r, err := typed(ctx, c, schema.MethodPaneMove, p, schema.ResultTypePaneMove,
		func(r *schema.ResultPaneMove) *string { return &r.Type })
	return r.MoveResult, err
}

// PaneRead reads a pane's screen or scrollback.
func (c *Client) PaneRead(ctx context.Context, p schema.PaneReadParams) (schema.PaneReadResult, error) {
	r, err := typed(ctx, c, schema.MethodPaneRead, p, schema.ResultTypePaneRead,
		func(r *schema.ResultPaneRead) *string { return &r.Type })
	return r.Read, err
}

// WorkspaceList lists the workspaces.
func (c *Client) WorkspaceList(ctx context.Context) ([]schema.WorkspaceInfo, error) {
	r, err := typed(ctx, c, schema.MethodWorkspaceList, schema.EmptyParams{}, schema.ResultTypeWorkspaceList,
		func(r *schema.ResultWorkspaceList) *string { return &r.Type })
	return r.Workspaces, err
}

// TabList lists the tabs of one workspace, or of all when workspaceID is
// empty.
func (c *Client) TabList(ctx context.Context, workspaceID string) ([]schema.TabInfo, error) {
	p := schema.TabListParams{}
	if workspaceID != "" {
		p.WorkspaceID = &workspaceID
	}
	r, err := typed(ctx, c, schema.MethodTabList, p, schema.ResultTypeTabList,
		func(r *schema.ResultTabList) *string { return &r.Type })
	return r.Tabs, err
}

// SessionSnapshot returns the whole session in one response.
func (c *Client) SessionSnapshot(ctx context.Context) (schema.SessionSnapshot, error) {
	r, err := typed(ctx, c, schema.MethodSessionSnapshot, schema.EmptyParams{}, schema.ResultTypeSessionSnapshot,
		func(r *schema.ResultSessionSnapshot) *string { return &r.Type })
	return r.Snapshot, err
}
