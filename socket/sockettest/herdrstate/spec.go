package herdrstate

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/limited"
	"github.com/herdr-link/herdr-link/schema"
)

// WorldSpec is the JSON world file: workspaces, their tabs, and the tabs'
// panes in layout order. A pane without Agent is a plain shell; an agent
// without Name is detected but unnamed. Ids, kinds, names and statuses are
// taken as given; missing ids are generated in Herdr's formats.
type WorldSpec struct {
	Workspaces []WorkspaceSpec `json:"workspaces"`
	// Focused is the focused pane; the first pane when empty.
	Focused string `json:"focused,omitempty"`
}

// WorkspaceSpec is one workspace of a [WorldSpec].
type WorkspaceSpec struct {
	ID    string    `json:"id,omitempty"`
	Label string    `json:"label,omitempty"`
	Tabs  []TabSpec `json:"tabs"`
	// Tokens and Worktree are reported as they are (workspace metadata and
	// a git worktree workspace).
	Tokens   map[string]string             `json:"tokens,omitempty"`
	Worktree *schema.WorkspaceWorktreeInfo `json:"worktree,omitempty"`
}

// TabSpec is one tab of a [WorkspaceSpec].
type TabSpec struct {
	ID    string     `json:"id,omitempty"`
	Label string     `json:"label,omitempty"`
	Panes []PaneSpec `json:"panes"`
}

// PaneSpec is one pane of a [TabSpec].
type PaneSpec struct {
	ID  string `json:"id,omitempty"`
	CWD string `json:"cwd,omitempty"`
	// Title is the terminal title (OSC 0/2) the pane's program set.
	Title string `json:"title,omitempty"`
	// Label is the pane's manual label.
	Label string     `json:"label,omitempty"`
	Agent *AgentSpec `json:"agent,omitempty"`
	// Command, when set, is run in the pane's terminal when the server
	// starts (see [CommandSpec] and [Program]).
	Command *CommandSpec `json:"command,omitempty"`
}

// AgentSpec is the agent occupying a pane.
type AgentSpec struct {
	// Kind is the agent label ("claude", "codex", "pi", …). Kinds Herdr
	// does not know as built-in agents are custom hook labels: listed, but
	// agent.prompt answers agent_not_ready.
	Kind string `json:"kind,omitempty"`
	Name string `json:"name,omitempty"`
	// Status is idle, working, blocked, done or unknown (default unknown).
	Status           string `json:"status,omitempty"`
	LaunchPending    bool   `json:"launch_pending,omitempty"`
	InteractiveReady bool   `json:"interactive_ready,omitempty"`
	// BracketedPaste fixes whether the agent program has bracketed paste
	// on; when absent it is on once the agent is ready (status other than
	// unknown), as real TUIs enable it when their input box is ready.
	// Herdr sends a prompt's text raw when it is off.
	BracketedPaste *bool `json:"bracketed_paste,omitempty"`
	// NotForeground makes prompts fail as if the agent had left the
	// foreground of its pane.
	NotForeground bool `json:"not_foreground,omitempty"`
	// PromptFails makes prompts fail with agent_prompt_failed.
	PromptFails bool `json:"prompt_fails,omitempty"`
	// Session is the agent's native session id, reported as agent_session
	// (source herdr:<kind>, kind id).
	Session string `json:"session,omitempty"`
	// ScreenDetectionSkipped reports a full-lifecycle hook authority.
	ScreenDetectionSkipped bool `json:"screen_detection_skipped,omitempty"`
	// Metadata an integration reported (pane.report_metadata): a display
	// title and agent name, state labels and tokens.
	DisplayTitle string            `json:"display_title,omitempty"`
	DisplayAgent string            `json:"display_agent,omitempty"`
	StateLabels  map[string]string `json:"state_labels,omitempty"`
	Tokens       map[string]string `json:"tokens,omitempty"`

	// The receiving end (see [Behaviour] and the package doc).

	// Draft is a user's unsent text already in the composer; the next
	// submission carries it.
	Draft string `json:"draft,omitempty"`
	// Stuck makes the composer never submit: Enter does nothing.
	Stuck bool `json:"stuck,omitempty"`
	// SwallowEnters is how many Enters after a paste the composer swallows,
	// as the kinds that may do so sometimes do (gemini, qwen and
	// copilot, for a paste of 64 KiB): see receiver.MaySwallowPasteEnter.
	// Other kinds ignore it.
	SwallowEnters int `json:"swallow_enters,omitempty"`
	// PlaceholderEnters is how many Enters after a paste submit its
	// placeholder instead of its text (qwen, for a paste of 64 KiB).
	PlaceholderEnters int `json:"placeholder_enters,omitempty"`
	// TurnMS is how long each turn lasts, in ms (0: 1000; negative: turns
	// never end by themselves).
	TurnMS int `json:"turn_ms,omitempty"`
	// TurnEndsMS, for an agent that starts working, ends that turn after
	// this many ms from the world's creation (0: it works until
	// World.SetStatus says otherwise).
	TurnEndsMS int `json:"turn_ends_ms,omitempty"`
	// SubmitMS, when present, replaces the kind's delay in ms from Enter
	// to the turn starting (0 is immediate).
	SubmitMS *int `json:"submit_ms,omitempty"`
}

// ParseWorld reads a world file.
func ParseWorld(data []byte) (*World, error) {
	var spec WorldSpec
	if err := jsonx.UnmarshalStrict(data, &spec); err != nil {
		return nil, fmt.Errorf("sockettest: world file: %w", err)
	}
	return NewWorld(spec)
}

// MaxWorldBytes bounds a world file.
const MaxWorldBytes = 64 << 20

// LoadWorld reads a world file from path (at most MaxWorldBytes).
func LoadWorld(path string) (*World, error) {
	data, err := limited.ReadFile(path, MaxWorldBytes)
	if err != nil {
		return nil, fmt.Errorf("sockettest: world file: %w", err)
	}
	return ParseWorld(data)
}

// DefaultWorldJSON is the built-in world: two workspaces, named and unnamed
// agents, and plain shells; some panes carry the fields a live Herdr fills
// (terminal titles, agent sessions, a hook authority).
const DefaultWorldJSON = `{
  "workspaces": [
    {"id": "w1", "label": "app", "tabs": [
      {"id": "w1:t1", "panes": [
        {"id": "w1:p1", "cwd": "/home/dev/app", "title": "✳ Refactor the session store", "agent": {"kind": "claude", "name": "brain", "status": "working", "session": "7d0c2a4e-51b3-4f0e-9a6d-0c1e2f3a4b5c"}},
        {"id": "w1:p2", "cwd": "/home/dev/app", "title": "codex", "agent": {"kind": "codex", "name": "reviewer", "status": "idle"}},
        {"id": "w1:p3", "cwd": "/home/dev/app", "agent": {"kind": "pi", "status": "idle"}},
        {"id": "w1:p4", "cwd": "/home/dev/app", "title": "dev@box: ~/app"}
      ]},
      {"id": "w1:t2", "panes": [
        {"id": "w1:p5", "cwd": "/home/dev/app/docs", "title": "OC | Write the changelog", "agent": {"kind": "opencode", "name": "writer", "status": "done", "session": "ses_3f9a1c0d2e4b", "screen_detection_skipped": true}}
      ]}
    ]},
    {"id": "w2", "label": "infra", "tabs": [
      {"id": "w2:t1", "panes": [
        {"id": "w2:p1", "cwd": "/home/dev/infra", "agent": {"kind": "claude", "name": "ops", "status": "blocked"}},
        {"id": "w2:p2", "cwd": "/home/dev/infra"}
      ]}
    ]}
  ]
}`

// DefaultWorld returns a new copy of the built-in world.
func DefaultWorld() *World {
	w, err := ParseWorld([]byte(DefaultWorldJSON))
	if err != nil {
		panic(err)
	}
	return w
}

// NewWorld builds a world from spec, on the real clock.
func NewWorld(spec WorldSpec) (*World, error) { return NewWorldClock(spec, nil) }

// NewWorldClock builds a world from spec whose agents run on clock (the
// real clock when nil).
//
// Long: builds the world in one pass over the spec (workspaces, tabs,
// panes, agents, aliases), checking each as Herdr would.
func NewWorldClock(spec WorldSpec, clock Clock) (*World, error) {
	if clock == nil {
		clock = realClock{}
	}
	w := &World{aliases: map[string]*pane{}, clock: clock}
	seen := map[string]bool{}
	unique := func(kind, id string) error {
		if seen[id] {
			return fmt.Errorf("sockettest: world: %s id %q used twice", kind, id)
		}
		seen[id] = true
		return nil
	}
	for wi, ws := range spec.Workspaces {
		w.wsSeq++
		wsp := &workspace{id: ws.ID, label: ws.Label, tokens: ws.Tokens, worktree: ws.Worktree}
		if wsp.id == "" {
			wsp.id = "w" + EncodeNumber(uint64(wi+1))
		}
		if err := unique("workspace", wsp.id); err != nil {
			return nil, err
		}
		if wsp.label == "" {
			wsp.label = wsp.id
		}
		if len(ws.Tabs) == 0 {
			return nil, fmt.Errorf("sockettest: world: workspace %s has no tabs", wsp.id)
		}
		for _, ts := range ws.Tabs {
			wsp.tabSeq++
			t := &tab{id: ts.ID, label: ts.Label, ws: wsp}
			if t.id == "" {
				t.id = wsp.id + ":t" + EncodeNumber(uint64(wsp.tabSeq))
			}
			if err := unique("tab", t.id); err != nil {
				return nil, err
			}
			if len(ts.Panes) == 0 {
				return nil, fmt.Errorf("sockettest: world: tab %s has no panes", t.id)
			}
			for _, ps := range ts.Panes {
				wsp.paneSeq++
				p := &pane{id: ps.ID, tab: t, cwd: ps.CWD, label: ps.Label}
				if p.id == "" {
					p.id = wsp.id + ":p" + EncodeNumber(uint64(wsp.paneSeq))
				}
				if err := unique("pane", p.id); err != nil {
					return nil, err
				}
				if ps.Command != nil {
					if err := ps.Command.Validate(); err != nil {
						return nil, fmt.Errorf("sockettest: world: pane %s: %w", p.id, err)
					}
					c := *ps.Command
					p.command = &c
				}
				p.term = w.newTerminal()
				if ps.Title != "" {
					title := ps.Title
					p.term.title = &title
				}
				if a := ps.Agent; a != nil {
					if err := w.occupy(p.term, a); err != nil {
						return nil, fmt.Errorf("sockettest: world: pane %s: %w", p.id, err)
					}
				}
				t.panes = append(t.panes, p)
			}
			wsp.tabs = append(wsp.tabs, t)
		}
		w.workspaces = append(w.workspaces, wsp)
	}
	// Ids generated later must not collide with the given ones.
	for _, ws := range w.workspaces {
		for _, t := range ws.tabs {
			for _, p := range t.panes {
				if n, ok := paneNumber(p.id, ws.id); ok && n > uint64(ws.paneSeq) {
					ws.paneSeq = int(n)
				}
			}
		}
	}
	if spec.Focused != "" {
		w.focused = w.paneByID(spec.Focused)
		if w.focused == nil {
			return nil, fmt.Errorf("sockettest: world: focused pane %s does not exist", spec.Focused)
		}
	} else if len(w.workspaces) > 0 {
		w.focused = w.workspaces[0].tabs[0].panes[0]
	}
	return w, nil
}

func paneNumber(id, ws string) (uint64, bool) {
	rest, ok := strings.CutPrefix(id, ws+":p")
	if !ok {
		return 0, false
	}
	return DecodeNumber(rest)
}

func (w *World) newTerminal() *terminal {
	w.termSeq++
	return &terminal{
		id:    fmt.Sprintf("term_%x%02x", 0x63a1f2b4c5d6+w.termSeq*0x1f3, w.termSeq),
		state: schema.AgentStatusUnknown,
		seen:  true,
	}
}

func (w *World) occupy(t *terminal, a *AgentSpec) error {
	if a.Kind != "" {
		k := a.Kind
		t.label = &k
	}
	if a.Name != "" {
		n := a.Name
		t.name = &n
	}
	if t.label == nil && t.name == nil {
		return errors.New("an agent needs a kind or a name")
	}
	status := a.Status
	if status == "" {
		status = "unknown"
	}
	switch schema.AgentStatus(status) {
	case schema.AgentStatusDone:
		t.state, t.seen = schema.AgentStatusIdle, false
	case schema.AgentStatusIdle, schema.AgentStatusWorking, schema.AgentStatusBlocked, schema.AgentStatusUnknown:
		t.state, t.seen = schema.AgentStatus(status), true
	default:
		return fmt.Errorf("unknown agent status %q", status)
	}
	if a.LaunchPending {
		t.launch = launchPending
		if t.state == schema.AgentStatusBlocked {
			t.launch = launchBlocked
		}
	}
	t.interactiveReady = a.InteractiveReady
	t.notForeground = a.NotForeground
	t.promptFails = a.PromptFails
	t.skipDetection = a.ScreenDetectionSkipped
	t.meta = metadata{title: optional(a.DisplayTitle), displayAgent: optional(a.DisplayAgent), stateLabels: a.StateLabels, tokens: a.Tokens}
	if a.Session != "" {
		kind := derefOr(t.label)
		t.session = &schema.AgentSessionInfo{Source: "herdr:" + kind, Agent: kind, Kind: schema.AgentSessionRefKindID, Value: a.Session}
	}
	w.stateSeq++
	t.seq = w.stateSeq
	t.revision++
	if t.label == nil {
		return nil
	}
	b := Behaviour{Stuck: a.Stuck, SwallowEnters: a.SwallowEnters, PlaceholderEnters: a.PlaceholderEnters, TurnTime: time.Duration(a.TurnMS) * time.Millisecond, BracketedPaste: a.BracketedPaste}
	if a.SubmitMS != nil {
		if *a.SubmitMS < 0 {
			return fmt.Errorf("submit_ms %d is negative", *a.SubmitMS)
		}
		d := time.Duration(*a.SubmitMS) * time.Millisecond
		b.SubmitLatency = &d
	}
	if a.TurnEndsMS < 0 {
		return fmt.Errorf("turn_ends_ms %d is negative", a.TurnEndsMS)
	}
	m := newModel(w, t, *t.label, b, a.Draft)
	t.recv = m
	if a.TurnEndsMS > 0 {
		if t.state != schema.AgentStatusWorking {
			return errors.New("turn_ends_ms needs status working")
		}
		m.EndTurnAfter(time.Duration(a.TurnEndsMS) * time.Millisecond)
	}
	return nil
}
