package link

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
	// Session is the agent session Herdr reports (agent_session), nil
	// when none: another session in the same terminal is another
	// occupant.
	Session *AgentSession `json:"agent_session,omitempty"`
	// CompletionSeq is Herdr's completion_seq (0.9.3 and later; absent
	// before): it steps when an idle transition ends completed work.
	CompletionSeq OptionalSeq `json:"completion_seq"`
	// HerdrName is the name Herdr holds when it is an alias (see
	// [DisplayName]): Name is then the name without its suffix. "" for
	// every other agent.
	HerdrName string `json:"-"`
}

// OptionalSeq is a counter Herdr may leave out: the zero value is
// absent. It is a value, not a pointer, so that a list of agents costs no
// allocation per agent for it.
type OptionalSeq struct {
	v   uint64
	set bool
}

// SeqOf is the OptionalSeq holding v.
func SeqOf(v uint64) OptionalSeq { return OptionalSeq{v, true} }

// Get returns the counter and whether Herdr sent it.
func (o OptionalSeq) Get() (uint64, bool) { return o.v, o.set }

// UnmarshalJSON reads a JSON number (null is absent).
func (o *OptionalSeq) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = OptionalSeq{}
		return nil
	}
	if len(b) > 1 && b[0] == '0' {
		return fmt.Errorf("completion_seq: %q: not a JSON number", b)
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("completion_seq: %w", err)
	}
	*o = OptionalSeq{v, true}
	return nil
}

// MarshalJSON writes the number, or null when absent.
func (o OptionalSeq) MarshalJSON() ([]byte, error) {
	if !o.set {
		return []byte("null"), nil
	}
	return strconv.AppendUint(nil, o.v, 10), nil
}

// AgentSession is the part of Herdr's agent_session herdr-link compares.
type AgentSession struct {
	Source string `json:"source"`
	Value  string `json:"value"`
}

// sessionOf is a's agent session as one string ("" when none).
func sessionOf(a Agent) string {
	if a.Session == nil || a.Session.Value == "" {
		return ""
	}
	return a.Session.Source + "\x00" + a.Session.Value
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
		r.Agents[i].fromHerdr()
	}
	return r.Agents, nil
}

// GetAgent implements Herdr.
func (h SocketHerdr) GetAgent(ctx context.Context, target string) (Agent, error) {
	r, err := socket.Call[agentResult](ctx, h.Client, schema.MethodAgentGet, schema.ResultTypeAgentInfo, schema.AgentTarget{Target: target})
	r.Agent.fromHerdr()
	return r.Agent, err
}

// Prompt implements Herdr.
func (h SocketHerdr) Prompt(ctx context.Context, target, text string) (Agent, error) {
	r, err := socket.Call[agentResult](ctx, h.Client, schema.MethodAgentPrompt, schema.ResultTypeAgentPrompted, schema.AgentPromptParams{Target: target, Text: text})
	r.Agent.fromHerdr()
	return r.Agent, err
}

// Rename implements Herdr.
func (h SocketHerdr) Rename(ctx context.Context, target, name string) (Agent, error) {
	r, err := socket.Call[agentResult](ctx, h.Client, schema.MethodAgentRename, schema.ResultTypeAgentInfo, schema.AgentRenameParams{Target: target, Name: &name})
	r.Agent.fromHerdr()
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

// PaneWatcher is implemented by a Herdr that streams agent status
// changes (events.subscribe); the courier then wakes on them instead of
// waiting for its next probe.
type PaneWatcher interface {
	// WatchPanes streams the status changes of the agents of paneIDs.
	WatchPanes(ctx context.Context, paneIDs []string) (PaneEvents, error)
}

// PaneEvents is an open stream of status changes.
type PaneEvents interface {
	// Next waits for the next change and returns its pane id.
	Next(ctx context.Context) (string, error)
	// Close ends the stream.
	Close() error
}
