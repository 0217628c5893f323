package socket

import (
	"context"

	"github.com/herdr-link/herdr-link/schema"
)

// The refusals of agent.start (upstream src/app/agents.rs), besides
// invalid_agent_name and agent_name_taken.
var (
	ErrUnsupportedAgentKind = &Error{Code: "unsupported_agent_kind"}
	ErrInvalidAgentArgument = &Error{Code: "invalid_agent_argument"}
	ErrInvalidAgentTimeout  = &Error{Code: "invalid_agent_timeout"}
	ErrAgentPaneNotFound    = &Error{Code: "agent_pane_not_found"}
	ErrAgentPaneBusy        = &Error{Code: "agent_pane_busy"}
	ErrAgentPaneUnavailable = &Error{Code: "agent_pane_unavailable"}
	ErrAgentStartInput      = &Error{Code: "agent_start_input_failed"}
)

// PaneSplit splits a pane (p.TargetPaneID, else the focused pane of
// p.WorkspaceID or of the active workspace) and returns the new pane, a
// plain shell. Refusals: pane_not_found, pane_split_failed.
func (c *Client) PaneSplit(ctx context.Context, p schema.PaneSplitParams) (schema.PaneInfo, error) {
	r, err := Call[schema.ResultPaneInfo](ctx, c, schema.MethodPaneSplit, schema.ResultTypePaneInfo, p)
	return r.Pane, err
}

// TabCreate creates a tab with one shell pane, its root pane, in
// p.WorkspaceID (the active workspace when nil). Refusal:
// workspace_not_found.
func (c *Client) TabCreate(ctx context.Context, p schema.TabCreateParams) (schema.ResultTabCreated, error) {
	return Call[schema.ResultTabCreated](ctx, c, schema.MethodTabCreate, schema.ResultTypeTabCreated, p)
}

// AgentStart types the kind's executable and p.Args (argv, quoted by
// Herdr for the pane's shell) into the shell of pane p.PaneID and names
// the launch p.Name at once; the launch is pending until Herdr detects
// the agent ready (interactive_ready) or its timeout passes. Herdr checks
// the name, the kind, the args, the name's uniqueness, then the pane:
// invalid_agent_name, unsupported_agent_kind, invalid_agent_argument,
// agent_name_taken, agent_pane_not_found, agent_pane_busy,
// agent_pane_unavailable, invalid_agent_timeout, agent_start_input_failed.
func (c *Client) AgentStart(ctx context.Context, p schema.AgentStartParams) (schema.ResultAgentStarted, error) {
	return Call[schema.ResultAgentStarted](ctx, c, schema.MethodAgentStart, schema.ResultTypeAgentStarted, p)
}
