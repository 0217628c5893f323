package deliver

import (
	"context"
	"fmt"
	"strconv"

	"github.com/herdr-link/herdr-link/schema"
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
	// link.DisplayName): Name is then the name without its suffix. "" for
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

// SessionOf is a's agent session as one string ("" when none).
func SessionOf(a Agent) string {
	if a.Session == nil || a.Session.Value == "" {
		return ""
	}
	return a.Session.Source + "\x00" + a.Session.Value
}

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

// State maps a Herdr status to the herdr-link state vocabulary:
// idle, working, blocked, done or unknown (for anything else).
func State[S ~string](s S) string {
	if schema.AgentStatus(s).Known() {
		return string(s)
	}
	return string(schema.AgentStatusUnknown)
}
