package link

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link/deliver"
	"github.com/herdr-link/herdr-link/link/start"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// Agent is the part of Herdr's AgentInfo herdr-link uses; the delivery
// core's type ([deliver.Agent]).
type Agent = deliver.Agent

// OptionalSeq is a counter Herdr may leave out ([deliver.OptionalSeq]).
type OptionalSeq = deliver.OptionalSeq

// SeqOf is the OptionalSeq holding v.
func SeqOf(v uint64) OptionalSeq { return deliver.SeqOf(v) }

// AgentSession is the part of Herdr's agent_session herdr-link compares.
type AgentSession = deliver.AgentSession

// PaneWatcher is implemented by a Herdr that streams agent status
// changes ([deliver.PaneWatcher]).
type PaneWatcher = deliver.PaneWatcher

// PaneEvents is an open stream of status changes.
type PaneEvents = deliver.PaneEvents

// fromHerdr turns the name Herdr sent into the agent's name: an alias
// a start chose ([DisplayName]) is known by the name it stands for.
func fromHerdr(a *Agent) {
	if d := DisplayName(a.Name); d != a.Name {
		a.HerdrName, a.Name = a.Name, d
	}
}

// Pane is the part of Herdr's PaneInfo herdr-link uses ([start.Pane]).
type Pane = start.Pane

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
	// ReadScreen is pane.read of the pane's visible screen as text (ANSI
	// stripped): what [Composer] reads.
	ReadScreen(ctx context.Context, paneID string) (string, error)
}

// SocketHerdr implements [Herdr] with a socket client. It decodes only the
// fields herdr-link reads, which keeps agent.list cheap on large sessions;
// the socket client streams a large list (one agent at a time).
type SocketHerdr struct {
	Client *socket.Client

	// sizes, when set (NewSocketHerdr), remembers the length of the last
	// agent list, so the next one's slice is allocated once; copies of
	// the value share it.
	sizes *listSizes
}

// NewSocketHerdr is a SocketHerdr on c that sizes each agent list's slice
// from the last one. SocketHerdr{Client: c} works too, without that.
func NewSocketHerdr(c *socket.Client) SocketHerdr {
	return SocketHerdr{Client: c, sizes: &listSizes{}}
}

// listSizes holds a SocketHerdr's size hints.
type listSizes struct {
	agents atomic.Int64 // the length of the last agent list read
}

type agentResult struct {
	Agent Agent `json:"agent"`
}

// agentList is agent.list's result.
type agentList struct {
	Agents []Agent `json:"agents"`
}

// SharesAnswer implements socket.SharedStrings: the agents' strings are
// parts of one copy of the answer (a 100-agent list: three allocations
// instead of 600). A string kept beyond the snapshot is cloned (the
// delivery lock's key).
func (r *agentList) SharesAnswer() {}

// ListAgents implements Herdr.
func (h SocketHerdr) ListAgents(ctx context.Context) ([]Agent, error) {
	// Sized for the last list read: the decoder fills the slice instead of
	// growing it step by step (13 µs of a peers call's 300 in the
	// profile of herdr-bench's MCP route).
	var n int64
	if h.sizes != nil {
		n = h.sizes.agents.Load()
	}
	r := agentList{Agents: make([]Agent, 0, n+n/16+4)}
	if err := socket.CallInto(ctx, h.Client, schema.MethodAgentList, schema.ResultTypeAgentList, schema.EmptyParams{}, &r); err != nil {
		return nil, err
	}
	if h.sizes != nil {
		h.sizes.agents.Store(int64(len(r.Agents)))
	}
	for i := range r.Agents {
		fromHerdr(&r.Agents[i])
	}
	return r.Agents, nil
}

// GetAgent implements Herdr.
func (h SocketHerdr) GetAgent(ctx context.Context, target string) (Agent, error) {
	r, err := socket.Call[agentResult](ctx, h.Client, schema.MethodAgentGet, schema.ResultTypeAgentInfo, schema.AgentTarget{Target: target})
	fromHerdr(&r.Agent)
	return r.Agent, err
}

// Prompt implements Herdr.
func (h SocketHerdr) Prompt(ctx context.Context, target, text string) (Agent, error) {
	r, err := socket.Call[agentResult](ctx, h.Client, schema.MethodAgentPrompt, schema.ResultTypeAgentPrompted, schema.AgentPromptParams{Target: target, Text: text})
	fromHerdr(&r.Agent)
	return r.Agent, err
}

// Rename implements Herdr.
func (h SocketHerdr) Rename(ctx context.Context, target, name string) (Agent, error) {
	r, err := socket.Call[agentResult](ctx, h.Client, schema.MethodAgentRename, schema.ResultTypeAgentInfo, schema.AgentRenameParams{Target: target, Name: &name})
	fromHerdr(&r.Agent)
	return r.Agent, err
}

// GetPane implements Herdr.
func (h SocketHerdr) GetPane(ctx context.Context, paneID string) (Pane, error) {
	r, err := socket.Call[struct {
		Pane Pane `json:"pane"`
	}](ctx, h.Client, schema.MethodPaneGet, schema.ResultTypePaneInfo, schema.PaneTarget{PaneID: paneID})
	return r.Pane, err
}

// ClosePane implements Herdr.
func (h SocketHerdr) ClosePane(ctx context.Context, paneID string) error {
	return h.Client.PaneClose(ctx, paneID)
}

// ReadScreen implements Herdr: the whole viewport (source "visible", no
// line limit), so the composer at its bottom is included however many
// blank rows a TUI leaves below it.
func (h SocketHerdr) ReadScreen(ctx context.Context, paneID string) (string, error) {
	r, err := socket.Call[struct {
		Read struct {
			Text string `json:"text"`
		} `json:"read"`
	}](ctx, h.Client, schema.MethodPaneRead, schema.ResultTypePaneRead, schema.PaneReadParams{PaneID: paneID, Source: schema.ReadSourceVisible})
	return r.Read.Text, err
}

// WatchPanes implements [PaneWatcher]: one events.subscribe stream of
// pane.agent_status_changed for each pane.
func (h SocketHerdr) WatchPanes(ctx context.Context, paneIDs []string) (PaneEvents, error) {
	subs := make([]schema.Subscription, len(paneIDs))
	for i, p := range paneIDs {
		subs[i] = schema.Subscription{PaneAgentStatusChanged: &schema.SubscriptionPaneAgentStatusChanged{PaneID: p}}
	}
	s, err := h.Client.Subscribe(ctx, schema.EventsSubscribeParams{Subscriptions: subs})
	if err != nil {
		return nil, err
	}
	return paneEvents{s}, nil
}

type paneEvents struct{ s *socket.Subscription }

func (p paneEvents) Next(ctx context.Context) (string, error) {
	for {
		ev, err := p.s.Next(ctx)
		if errors.Is(err, socket.ErrMalformedResponse) {
			continue
		}
		if err != nil {
			return "", err
		}
		var d struct {
			PaneID string `json:"pane_id"`
		}
		if jsonx.Unmarshal(ev.Data, &d) == nil && d.PaneID != "" {
			return d.PaneID, nil
		}
	}
}

func (p paneEvents) Close() error { return p.s.Close() }
