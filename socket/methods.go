package socket

import (
	"context"

	"github.com/herdr-link/herdr-link/schema"
)

// AgentGet resolves target (a current pane id hosting an agent, or an exact
// agent name) to its agent. Herdr answers agent_not_found
// ([ErrAgentNotFound]) or agent_target_ambiguous.
func (c *Client) AgentGet(ctx context.Context, target string) (schema.AgentInfo, error) {
	r, err := Call[schema.ResultAgentInfo](ctx, c, schema.MethodAgentGet, schema.ResultTypeAgentInfo, schema.AgentTarget{Target: target})
	return r.Agent, err
}

// AgentList lists every agent of the server, named or not, in workspace,
// tab and layout order. Plain shells are not agents.
func (c *Client) AgentList(ctx context.Context) ([]schema.AgentInfo, error) {
	r, err := Call[schema.ResultAgentList](ctx, c, schema.MethodAgentList, schema.ResultTypeAgentList, schema.EmptyParams{})
	return r.Agents, err
}

// AgentPrompt types p.Text into the agent's pane and submits it. Without
// p.Wait it returns as soon as the text is written, with the agent as it
// was before submission. Refusals: empty_agent_prompt, agent_not_found,
// agent_blocked (nothing was written), agent_not_ready, agent_prompt_failed.
func (c *Client) AgentPrompt(ctx context.Context, p schema.AgentPromptParams) (schema.AgentInfo, error) {
	r, err := Call[schema.ResultAgentPrompted](ctx, c, schema.MethodAgentPrompt, schema.ResultTypeAgentPrompted, p)
	return r.Agent, err
}

// AgentRename sets the agent name of target, or clears it when name is nil.
func (c *Client) AgentRename(ctx context.Context, target string, name *string) (schema.AgentInfo, error) {
	r, err := Call[schema.ResultAgentInfo](ctx, c, schema.MethodAgentRename, schema.ResultTypeAgentInfo, schema.AgentRenameParams{Target: target, Name: name})
	return r.Agent, err
}

// PaneClose closes a pane (and with it its agent and the agent's name).
// paneID may be a canonical id or an alias Herdr still accepts.
func (c *Client) PaneClose(ctx context.Context, paneID string) error {
	_, err := Call[schema.ResultOk](ctx, c, schema.MethodPaneClose, schema.ResultTypeOk, schema.PaneTarget{PaneID: paneID})
	return err
}

// PaneGet returns one pane. paneID may be an alias of a moved pane; the
// result carries the pane's current id.
func (c *Client) PaneGet(ctx context.Context, paneID string) (schema.PaneInfo, error) {
	r, err := Call[schema.ResultPaneInfo](ctx, c, schema.MethodPaneGet, schema.ResultTypePaneInfo, schema.PaneTarget{PaneID: paneID})
	return r.Pane, err
}

// PaneList lists the panes of one workspace, or of all when workspaceID is
// empty.
func (c *Client) PaneList(ctx context.Context, workspaceID string) ([]schema.PaneInfo, error) {
	p := schema.PaneListParams{}
	if workspaceID != "" {
		p.WorkspaceID = &workspaceID
	}
	r, err := Call[schema.ResultPaneList](ctx, c, schema.MethodPaneList, schema.ResultTypePaneList, p)
	return r.Panes, err
}

// PaneMove moves a pane to another tab or workspace. A move to another
// workspace gives the pane a new id; the old one stays a pane.* alias.
func (c *Client) PaneMove(ctx context.Context, p schema.PaneMoveParams) (schema.PaneMoveResult, error) {
	r, err := Call[schema.ResultPaneMove](ctx, c, schema.MethodPaneMove, schema.ResultTypePaneMove, p)
	return r.MoveResult, err
}

// PaneRead reads a pane's screen or scrollback.
func (c *Client) PaneRead(ctx context.Context, p schema.PaneReadParams) (schema.PaneReadResult, error) {
	r, err := Call[schema.ResultPaneRead](ctx, c, schema.MethodPaneRead, schema.ResultTypePaneRead, p)
	return r.Read, err
}

// WorkspaceList lists the workspaces.
func (c *Client) WorkspaceList(ctx context.Context) ([]schema.WorkspaceInfo, error) {
	r, err := Call[schema.ResultWorkspaceList](ctx, c, schema.MethodWorkspaceList, schema.ResultTypeWorkspaceList, schema.EmptyParams{})
	return r.Workspaces, err
}

// TabList lists the tabs of one workspace, or of all when workspaceID is
// empty.
func (c *Client) TabList(ctx context.Context, workspaceID string) ([]schema.TabInfo, error) {
	p := schema.TabListParams{}
	if workspaceID != "" {
		p.WorkspaceID = &workspaceID
	}
	r, err := Call[schema.ResultTabList](ctx, c, schema.MethodTabList, schema.ResultTypeTabList, p)
	return r.Tabs, err
}

// SessionSnapshot returns the whole session in one response.
func (c *Client) SessionSnapshot(ctx context.Context) (schema.SessionSnapshot, error) {
	r, err := Call[schema.ResultSessionSnapshot](ctx, c, schema.MethodSessionSnapshot, schema.ResultTypeSessionSnapshot, schema.EmptyParams{})
	return r.Snapshot, err
}
