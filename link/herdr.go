package link

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/herdr-link/herdr-link/internal/jsonx"
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
	// LaunchPending is Herdr's launch_pending: a managed launch that has
	// not become active yet.
	LaunchPending bool `json:"launch_pending"`
	// InteractiveReady is Herdr's interactive_ready: the managed launch
	// (agent.start) became active.
	InteractiveReady bool `json:"interactive_ready"`
	// HerdrName is the name Herdr holds when it is an alias (see
	// [DisplayName]): Name is then the name without its suffix. "" for
	// every other agent.
	HerdrName string `json:"-"`
}

// fromHerdr turns the name Herdr sent into the agent's name: an alias
// a start chose ([DisplayName]) is known by the name it stands for.
func (a *Agent) fromHerdr() {
	if d := DisplayName(a.Name); d != a.Name {
		a.HerdrName, a.Name = a.Name, d
	}
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
	// ReadScreen is pane.read of the pane's visible screen as text (ANSI
	// stripped): what [Composer] reads.
	ReadScreen(ctx context.Context, paneID string) (string, error)
}

// SocketHerdr implements [Herdr] with a socket client. It decodes only the
// fields herdr-link reads, which keeps agent.list cheap on large sessions.
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
	Type  string `json:"type"`
	Agent Agent  `json:"agent"`
}

func (h SocketHerdr) agent(ctx context.Context, method, tag string, params any) (Agent, error) {
	var r agentResult
	if err := h.Client.Call(ctx, method, params, &r); err != nil {
		return Agent{}, err
	}
	r.Agent.fromHerdr()
	return r.Agent, checkTag(method, r.Type, tag)
}

func checkTag(method, got, want string) error {
	if got != want {
		return socket.AfterWrite(fmt.Errorf("link: %s: %w: result type %q, want %q", method, socket.ErrProtocol, got, want))
	}
	return nil
}

// agentList is agent.list's result. Over 4 MiB, the socket client decodes
// it as a stream (see [socket.StreamDecoder]): one agent at a time, so a
// large list costs the agents herdr-link keeps, not the text Herdr sent.
type agentList struct {
	Type   string  `json:"type"`
	Agents []Agent `json:"agents"`
}

// SharesAnswer implements socket.SharedStrings: the agents' strings are
// parts of one copy of the answer (a 100-agent list: three allocations
// instead of 600). A string kept beyond the snapshot is cloned (the
// delivery lock's key).
func (r *agentList) SharesAnswer() {}

// DecodeStream implements socket.StreamDecoder.
func (r *agentList) DecodeStream(dec *json.Decoder) error {
	if err := delim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case "type":
			err = dec.Decode(&r.Type)
		case "agents":
			err = r.decodeAgents(dec)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return err
		}
	}
	return delim(dec, '}')
}

func (r *agentList) decodeAgents(dec *json.Decoder) error {
	if err := delim(dec, '['); err != nil {
		return err
	}
	var raw json.RawMessage
	for dec.More() {
		// encoding/json only cuts the stream into elements; goccy decodes
		// each (several times faster than a reflective stream decode).
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		var a Agent
		if err := jsonx.Unmarshal(raw, &a); err != nil {
			return err
		}
		r.Agents = append(r.Agents, a)
	}
	return delim(dec, ']')
}

func delim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("want %v, got %v", d, tok)
	}
	return nil
}

// ListAgents implements Herdr.
func (h SocketHerdr) ListAgents(ctx context.Context) ([]Agent, error) {
	// Sized for the last list read: the decoder fills the slice instead of
	// growing it step by step.
	var n int64
	if h.sizes != nil {
		n = h.sizes.agents.Load()
	}
	r := agentList{Agents: make([]Agent, 0, n+n/16+4)}
	if err := h.Client.Call(ctx, schema.MethodAgentList, schema.EmptyParams{}, &r); err != nil {
		return nil, err
	}
	if h.sizes != nil {
		h.sizes.agents.Store(int64(len(r.Agents)))
	}
	for i := range r.Agents {
		r.Agents[i].fromHerdr()
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

// ReadScreen implements Herdr: the whole viewport (source "visible", no
// line limit), so the composer at its bottom is included however many
// blank rows a TUI leaves below it.
func (h SocketHerdr) ReadScreen(ctx context.Context, paneID string) (string, error) {
	var r struct {
		Type string `json:"type"`
		Read struct {
			Text string `json:"text"`
		} `json:"read"`
	}
	if err := h.Client.Call(ctx, schema.MethodPaneRead, schema.PaneReadParams{PaneID: paneID, Source: schema.ReadSourceVisible}, &r); err != nil {
		return "", err
	}
	return r.Read.Text, checkTag(schema.MethodPaneRead, r.Type, schema.ResultTypePaneRead)
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
