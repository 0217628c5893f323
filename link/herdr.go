package link

import (
	"context"
	"fmt"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// Agent is the part of Herdr's AgentInfo herdr-link uses. Within one
// agent.list snapshot a pane id identifies an agent.
type Agent struct {
	Name string `json:"name"`
	// Status is Herdr's agent_status as sent; [State] normalises it.
	Status      string `json:"agent_status"`
	WorkspaceID string `json:"workspace_id"`
	PaneID      string `json:"pane_id"`
	// TerminalID is stable across pane moves: it keys the delivery lock.
	TerminalID string `json:"terminal_id"`
	// Kind is Herdr's agent label ("claude", "codex", …; "" when none).
	Kind string `json:"agent"`
	// Seq is Herdr's state_change_seq.
	Seq uint64 `json:"state_change_seq"`
}

// Pane is the part of Herdr's PaneInfo herdr-link uses.
type Pane struct {
	PaneID      string `json:"pane_id"`
	WorkspaceID string `json:"workspace_id"`
	TerminalID  string `json:"terminal_id"`
}

// Herdr is the control plane herdr-link drives. [SocketHerdr] implements it
// over Herdr's socket; errors are the socket package's.
type Herdr interface {
	// ListAgents is agent.list.
	ListAgents(ctx context.Context) ([]Agent, error)
	// GetAgent is agent.get.
	GetAgent(ctx context.Context, target string) (Agent, error)
	// Prompt is agent.prompt without wait; it returns the agent as Herdr
	// reported it.
	Prompt(ctx context.Context, target, text string) (Agent, error)
	// Rename is agent.rename with a name.
	Rename(ctx context.Context, target, name string) (Agent, error)
	// GetPane is pane.get (which accepts moved-pane aliases).
	GetPane(ctx context.Context, paneID string) (Pane, error)
	// ClosePane is pane.close.
	ClosePane(ctx context.Context, paneID string) error
}

// SocketHerdr implements [Herdr] with a socket client. It decodes only the
// fields herdr-link reads, which keeps agent.list cheap on large sessions.
type SocketHerdr struct {
	Client *socket.Client
}

type agentResult struct {
	Type  string `json:"type"`
	Agent Agent  `json:"agent"`
}

func (h SocketHerdr) agent(ctx context.Context, method, tag string, params any) (Agent, error) {
	var r agentResult
	if err := h.Client.Call(ctx, method, params, &r); err != nil {
		return Agent{}, err
	}
	return r.Agent, checkTag(method, r.Type, tag)
}

func checkTag(method, got, want string) error {
	if got != want {
		return socket.AfterWrite(fmt.Errorf("link: %s: %w: result type %q, want %q", method, socket.ErrProtocol, got, want))
	}
	return nil
}

// ListAgents implements Herdr.
func (h SocketHerdr) ListAgents(ctx context.Context) ([]Agent, error) {
	var r struct {
		Type   string  `json:"type"`
		Agents []Agent `json:"agents"`
	}
	if err := h.Client.Call(ctx, schema.MethodAgentList, schema.EmptyParams{}, &r); err != nil {
		return nil, err
	}
	return r.Agents, checkTag(schema.MethodAgentList, r.Type, schema.ResultTypeAgentList)
}

// GetAgent implements Herdr.
func (h SocketHerdr) GetAgent(ctx context.Context, target string) (Agent, error) {
	return h.agent(ctx, schema.MethodAgentGet, schema.ResultTypeAgentInfo, schema.AgentTarget{Target: target})
}

// Prompt implements Herdr.
func (h SocketHerdr) Prompt(ctx context.Context, target, text string) (Agent, error) {
	return h.agent(ctx, schema.MethodAgentPrompt, schema.ResultTypeAgentPrompted, schema.AgentPromptParams{Target: target, Text: text})
}

// Rename implements Herdr.
func (h SocketHerdr) Rename(ctx context.Context, target, name string) (Agent, error) {
	return h.agent(ctx, schema.MethodAgentRename, schema.ResultTypeAgentInfo, schema.AgentRenameParams{Target: target, Name: &name})
}

// GetPane implements Herdr.
func (h SocketHerdr) GetPane(ctx context.Context, paneID string) (Pane, error) {
	var r struct {
		Type string `json:"type"`
		Pane Pane   `json:"pane"`
	}
	if err := h.Client.Call(ctx, schema.MethodPaneGet, schema.PaneTarget{PaneID: paneID}, &r); err != nil {
		return Pane{}, err
	}
	return r.Pane, checkTag(schema.MethodPaneGet, r.Type, schema.ResultTypePaneInfo)
}

// ClosePane implements Herdr.
func (h SocketHerdr) ClosePane(ctx context.Context, paneID string) error {
	return h.Client.PaneClose(ctx, paneID)
}
