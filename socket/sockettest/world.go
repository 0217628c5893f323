package sockettest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/herdr-link/herdr-link/internal/jsonx"
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

// LoadWorld reads a world file from path.
func LoadWorld(path string) (*World, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return nil, err
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

// World is the simulated session state: workspaces, tabs, panes, terminals
// and agents. All methods are safe for concurrent use; the server applies
// requests to it one at a time, as Herdr's app loop does.
type World struct {
	mu         sync.Mutex
	workspaces []*workspace
	aliases    map[string]*pane // moved-pane aliases, pane.* only
	focused    *pane
	unfocused  bool // the outer terminal reported focus loss
	termSeq    uint64
	stateSeq   uint64
	wsSeq      int
	events     eventRing
	changed    *sync.Cond // broadcast on every state change
	gen        uint64     // bumped on every state change
	listGen    uint64     // gen of listCache
	listCache  []byte     // the agent_list result object at listGen
	// progs counts running pane programs' watchers and closers.
	progs        sync.WaitGroup
	closingProgs bool // the server is closing: no new programs
	clock        Clock
}

// bump records a state change (w.mu held).
func (w *World) bump() {
	w.gen++
	w.changed.Broadcast()
}

type workspace struct {
	id       string
	label    string
	tabs     []*tab
	paneSeq  int
	tabSeq   int
	tokens   map[string]string
	worktree *schema.WorkspaceWorktreeInfo
}

type tab struct {
	id    string
	label string
	ws    *workspace
	panes []*pane
}

type pane struct {
	id      string
	tab     *tab
	term    *terminal
	cwd     string
	command *CommandSpec // run at server start
	label   string       // manual label
}

type terminal struct {
	id               string
	name             *string
	label            *string // effective agent label
	state            schema.AgentStatus
	seen             bool
	launch           launchPhase
	interactiveReady bool
	notForeground    bool
	promptFails      bool
	seq              uint64
	revision         uint64
	writes           []string     // every write to the terminal
	prompts          []string     // the text of each accepted agent.prompt
	recv             receiver     // the program reading the terminal; nil for a shell
	subs             []Submission // the turns its agents received
	prog             Program      // a real program in the terminal (its screen outlives it)
	title            *string      // terminal title (OSC 0/2)
	session          *schema.AgentSessionInfo
	skipDetection    bool
	meta             metadata // reported by an integration
}

// metadata is what an integration reported about a pane's agent.
type metadata struct {
	title, displayAgent *string
	stateLabels, tokens map[string]string
}

type launchPhase int

const (
	launchNone launchPhase = iota
	launchPending
	launchBlocked
	launchActive
)

// NewWorld builds a world from spec, on the real clock.
func NewWorld(spec WorldSpec) (*World, error) { return NewWorldClock(spec, nil) }

// NewWorldClock builds a world from spec whose agents run on clock (the
// real clock when nil).
func NewWorldClock(spec WorldSpec, clock Clock) (*World, error) {
	if clock == nil {
		clock = realClock{}
	}
	w := &World{aliases: map[string]*pane{}, clock: clock}
	w.changed = sync.NewCond(&w.mu)
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
					if err := ps.Command.validate(); err != nil {
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
	b := Behaviour{Stuck: a.Stuck, TurnTime: time.Duration(a.TurnMS) * time.Millisecond, BracketedPaste: a.BracketedPaste}
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
		m.startTurnTimer(time.Duration(a.TurnEndsMS) * time.Millisecond)
	}
	return nil
}

func (t *terminal) isAgent() bool { return t.name != nil || t.label != nil }

func (t *terminal) status() schema.AgentStatus {
	if t.state == schema.AgentStatusIdle && !t.seen {
		return schema.AgentStatusDone
	}
	return t.state
}

// --- lookups (w.mu held) ---

func (w *World) panes() []*pane {
	var out []*pane
	for _, ws := range w.workspaces {
		for _, t := range ws.tabs {
			out = append(out, t.panes...)
		}
	}
	return out
}

// paneByID finds a pane by its current id only.
func (w *World) paneByID(id string) *pane {
	for _, p := range w.panes() {
		if p.id == id {
			return p
		}
	}
	return nil
}

// paneByTarget resolves pane.* targets: the current id, a moved-pane
// alias, or a loose form (see paneByLooseID).
func (w *World) paneByTarget(id string) *pane {
	if p := w.paneByID(id); p != nil {
		return p
	}
	if p, ok := w.aliases[id]; ok && w.paneByID(p.id) == p {
		return p
	}
	return w.paneByLooseID(id)
}

func (w *World) workspaceByArg(arg string) *workspace {
	for _, ws := range w.workspaces {
		if ws.id == arg {
			return ws
		}
	}
	// w_<N> and a bare N are 1-based positions (parse_workspace_id).
	pos := strings.TrimPrefix(arg, "w_")
	if n, err := strconv.ParseUint(pos, 10, 64); err == nil && n >= 1 && n <= uint64(len(w.workspaces)) {
		return w.workspaces[n-1]
	}
	return nil
}

// paneByLooseID resolves the other pane id forms parse_pane_id accepts:
// <ws>:p<n> and <ws>-<decimal n>, <ws> being any workspace argument form
// and n the pane's public number in that workspace.
func (w *World) paneByLooseID(id string) *pane {
	var wsArg string
	var n uint64
	if i := strings.LastIndex(id, ":p"); i >= 0 {
		num, ok := DecodeNumber(id[i+2:])
		if !ok {
			return nil
		}
		wsArg, n = id[:i], num
	} else if i := strings.LastIndex(id, "-"); i >= 0 {
		num, err := strconv.ParseUint(id[i+1:], 10, 64)
		if err != nil {
			return nil
		}
		wsArg, n = id[:i], num
	} else {
		return nil
	}
	ws := w.workspaceByArg(wsArg)
	if ws == nil {
		return nil
	}
	want := ws.id + ":p" + EncodeNumber(n)
	for _, t := range ws.tabs {
		for _, p := range t.panes {
			if p.id == want {
				return p
			}
		}
	}
	return nil
}

func (w *World) tabByID(id string) *tab {
	for _, ws := range w.workspaces {
		for _, t := range ws.tabs {
			if t.id == id {
				return t
			}
		}
	}
	return nil
}

func (w *World) agentInfo(p *pane) schema.AgentInfo {
	t := p.term
	info := schema.AgentInfo{
		TerminalID:       t.id,
		Name:             t.name,
		Agent:            t.label,
		AgentStatus:      t.status(),
		WorkspaceID:      p.tab.ws.id,
		TabID:            p.tab.id,
		PaneID:           p.id,
		Focused:          p == w.focused,
		StateChangeSeq:   t.seq,
		Revision:         t.revision,
		LaunchPending:    t.launch == launchPending || t.launch == launchBlocked,
		InteractiveReady: t.interactiveReady,
		AgentSession:     t.session,
		// Written only when true, as Herdr does.
		ScreenDetectionSkipped: t.skipDetection,
	}
	info.TerminalTitle, info.TerminalTitleStripped = t.titles()
	info.CWD, info.ForegroundCWD = p.cwds()
	info.Title, info.DisplayAgent, info.StateLabels, info.Tokens = t.meta.title, t.meta.displayAgent, t.meta.stateLabels, t.meta.tokens
	return info
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// cwds are a pane's cwd and its foreground process's cwd (the same here).
func (p *pane) cwds() (*string, *string) {
	if p.cwd == "" {
		return nil, nil
	}
	a, b := p.cwd, p.cwd
	return &a, &b
}

// titles are the terminal title and the title without a leading spinner
// or status glyph ("✳ task" → "task").
func (t *terminal) titles() (*string, *string) {
	if t.title == nil {
		return nil, nil
	}
	full, stripped := *t.title, *t.title
	if r, size := utf8.DecodeRuneInString(stripped); r >= 0x80 && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		stripped = strings.TrimLeft(stripped[size:], " ")
	}
	return &full, &stripped
}

func (w *World) paneInfo(p *pane) schema.PaneInfo {
	info := schema.PaneInfo{
		PaneID:      p.id,
		TerminalID:  p.term.id,
		WorkspaceID: p.tab.ws.id,
		TabID:       p.tab.id,
		Focused:     p == w.focused,
		AgentStatus: schema.AgentStatusUnknown,
		Agent:       p.term.label,
		Revision:    p.term.revision,
		Scroll:      &schema.PaneScrollInfo{ViewportRows: 40},
	}
	if p.term.label != nil {
		info.AgentStatus = p.term.status()
		info.AgentSession = p.term.session
		m := p.term.meta
		info.Title, info.DisplayAgent, info.StateLabels, info.Tokens = m.title, m.displayAgent, m.stateLabels, m.tokens
	}
	info.Label = optional(p.label)
	info.TerminalTitle, info.TerminalTitleStripped = p.term.titles()
	info.CWD, info.ForegroundCWD = p.cwds()
	return info
}

func aggregate(statuses []schema.AgentStatus) schema.AgentStatus {
	// Herdr's attention order (pane_attention_priority): an unseen
	// completion outranks work in progress.
	rank := map[schema.AgentStatus]int{schema.AgentStatusBlocked: 5, schema.AgentStatusDone: 4, schema.AgentStatusWorking: 3, schema.AgentStatusIdle: 2, schema.AgentStatusUnknown: 1}
	best := schema.AgentStatusUnknown
	for _, s := range statuses {
		if rank[s] > rank[best] {
			best = s
		}
	}
	return best
}

func (w *World) tabInfo(t *tab, number int) schema.TabInfo {
	var st []schema.AgentStatus
	focused := false
	for _, p := range t.panes {
		if p.term.label != nil {
			st = append(st, p.term.status())
		}
		focused = focused || p == w.focused
	}
	label := t.label
	if label == "" {
		label = strconv.Itoa(number)
	}
	return schema.TabInfo{TabID: t.id, WorkspaceID: t.ws.id, Number: uint(number), Label: label, Focused: focused,
		PaneCount: uint(len(t.panes)), AgentStatus: aggregate(st)}
}

func (w *World) workspaceInfo(ws *workspace, number int) schema.WorkspaceInfo {
	var st []schema.AgentStatus
	panes, focused := 0, false
	active := ws.tabs[0].id
	for _, t := range ws.tabs {
		for _, p := range t.panes {
			panes++
			if p.term.label != nil {
				st = append(st, p.term.status())
			}
			if p == w.focused {
				focused = true
				active = t.id
			}
		}
	}
	return schema.WorkspaceInfo{WorkspaceID: ws.id, Number: uint(number), Label: ws.label, Focused: focused,
		PaneCount: uint(panes), TabCount: uint(len(ws.tabs)), ActiveTabID: active, AgentStatus: aggregate(st),
		Tokens: ws.tokens, Worktree: ws.worktree}
}

func (w *World) layout(t *tab) schema.PaneLayoutSnapshot {
	const width, height = 200, 50
	l := schema.PaneLayoutSnapshot{TabID: t.id, WorkspaceID: t.ws.id, Area: schema.PaneLayoutRect{Width: width, Height: height},
		FocusedPaneID: t.panes[0].id, Panes: []schema.PaneLayoutPane{}, Splits: []schema.PaneLayoutSplit{}}
	n := len(t.panes)
	for i, p := range t.panes {
		x := uint16(i * width / n)
		wd := uint16((i+1)*width/n) - x
		l.Panes = append(l.Panes, schema.PaneLayoutPane{PaneID: p.id, Focused: p == w.focused, Rect: schema.PaneLayoutRect{X: x, Width: wd, Height: height}})
		if p == w.focused {
			l.FocusedPaneID = p.id
		}
		if i > 0 {
			l.Splits = append(l.Splits, schema.PaneLayoutSplit{ID: "s" + strconv.Itoa(i), Direction: schema.SplitDirectionRight,
				Ratio: float64(i) / float64(n), Rect: schema.PaneLayoutRect{Width: width, Height: height}})
		}
	}
	return l
}

// --- mutations for tests (exported) ---

// ErrNoPane is returned by World methods for a pane that does not exist.
var ErrNoPane = errors.New("sockettest: no such pane")

func (w *World) lockedPane(paneID string) (*pane, error) {
	p := w.paneByTarget(paneID)
	if p == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoPane, paneID)
	}
	return p, nil
}

// SetStatus changes the agent status of the agent in paneID as detection
// would: "idle" after working or blocked reads done unless the pane is
// focused; "done" forces idle-and-unseen. A change of the underlying
// state (idle, working, blocked, unknown; not seen/unseen) bumps the
// server-wide state_change_seq; setting the state it already has changes
// nothing. A managed launch goes pending → blocked on "blocked" and
// becomes active (interactive_ready) on "idle". Leaving working ends the
// modelled agent's turn, so input it queued is submitted.
func (w *World) SetStatus(paneID, status string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	switch schema.AgentStatus(status) {
	case schema.AgentStatusDone, schema.AgentStatusIdle, schema.AgentStatusWorking, schema.AgentStatusBlocked, schema.AgentStatusUnknown:
	default:
		return fmt.Errorf("sockettest: unknown status %q", status)
	}
	w.setState(p, schema.AgentStatus(status))
	return nil
}

// setState applies a detected status (w.mu held); see SetStatus.
func (w *World) setState(p *pane, status schema.AgentStatus) {
	t := p.term
	oldState, oldStatus := t.state, t.status()
	switch status {
	case schema.AgentStatusDone:
		t.state, t.seen = schema.AgentStatusIdle, false
	case schema.AgentStatusIdle:
		// Finishing work (working or blocked → idle) where the user cannot
		// see it is a completion not yet seen: it reads done. Herdr counts
		// it seen when the pane is in the active tab of the active
		// workspace and the outer terminal has not lost focus. The first
		// idle after detection (unknown → idle), and idle during a managed
		// launch, stay seen. Idle → idle changes nothing.
		if t.state != schema.AgentStatusIdle {
			finished := (t.state == schema.AgentStatusWorking || t.state == schema.AgentStatusBlocked) &&
				t.launch != launchPending && t.launch != launchBlocked
			t.state, t.seen = schema.AgentStatusIdle, !(finished && !w.visible(p))
		}
	default:
		t.state, t.seen = status, true
	}
	switch {
	case t.launch == launchPending && t.state == schema.AgentStatusBlocked:
		t.launch = launchBlocked
	case (t.launch == launchPending || t.launch == launchBlocked) && t.state == schema.AgentStatusIdle:
		t.launch, t.interactiveReady = launchActive, true
	}
	if t.state != oldState {
		w.stateSeq++
		t.seq = w.stateSeq
	}
	if t.status() != oldStatus {
		w.emitStatus(p)
	}
	w.bump()
	if t.state != oldState && t.recv != nil {
		t.recv.stateChanged(oldState, t.state)
	}
}

// visible reports (w.mu held) whether the user sees p: it is in the active
// tab of the active workspace (the focused pane's tab) and the outer
// terminal is focused.
func (w *World) visible(p *pane) bool {
	return w.focused != nil && p.tab == w.focused.tab && !w.unfocused
}

// SetTerminalFocus records the outer terminal gaining (true) or losing
// (false) focus, as Herdr learns it from focus reports. While it is
// unfocused, agents finishing in the active tab read done.
func (w *World) SetTerminalFocus(focused bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unfocused = !focused
	w.bump()
}

// Detect makes a plain shell pane (or an agent pane) host a detected agent
// of kind, unnamed and in status unknown, as Herdr's process detection
// does. Events: pane_agent_detected, pane_updated when a name was dropped,
// pane_agent_status_changed when the status changed.
func (w *World) Detect(paneID, kind string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	t := p.term
	old, hadName := t.status(), t.name != nil
	if t.label != nil && *t.label != kind {
		t.name = nil // a different agent replaces the occupant and its name
		t.session = nil
	}
	changed := t.label == nil || *t.label != kind || t.state != schema.AgentStatusUnknown
	k := kind
	changedLabel := t.label == nil || *t.label != kind
	t.label = &k
	t.state, t.seen = schema.AgentStatusUnknown, true
	if changed {
		w.stateSeq++
		t.seq = w.stateSeq
	}
	// A newly started program: empty composer, raw typing until ready.
	if t.recv != nil {
		t.recv.stop()
	}
	t.recv = newModel(w, t, kind, Behaviour{}, "")
	if changedLabel {
		w.emit(schema.EventData{PaneAgentDetected: &schema.EventDataPaneAgentDetected{PaneID: p.id, WorkspaceID: p.tab.ws.id, Agent: &k}})
	}
	if hadName && t.name == nil {
		w.emitPaneUpdated(p)
	}
	if t.status() != old {
		w.emitStatus(p)
	}
	w.bump()
	return nil
}

// Exit makes the agent in paneID exit: its label and name are cleared and
// the pane becomes a plain shell. Events: pane_agent_detected with
// released and the final status, pane_updated when a name was dropped,
// pane_agent_status_changed when the status changed.
func (w *World) Exit(paneID string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	w.exit(p)
	return nil
}

// exit clears p's agent, as when it exits (w.mu held).
func (w *World) exit(p *pane) {
	t := p.term
	final, label, hadName := t.status(), t.label, t.name != nil
	changed := t.label != nil || t.name != nil || t.state != schema.AgentStatusUnknown
	t.label, t.name, t.session = nil, nil, nil
	t.state, t.seen, t.launch = schema.AgentStatusUnknown, true, launchNone
	if changed {
		w.stateSeq++
		t.seq = w.stateSeq
	}
	if t.recv != nil {
		t.recv.stop()
		t.recv = nil
	}
	if label != nil || hadName {
		w.emit(schema.EventData{PaneAgentDetected: &schema.EventDataPaneAgentDetected{PaneID: p.id, WorkspaceID: p.tab.ws.id,
			Agent: label, Released: true, FinalStatus: &final}})
	}
	if hadName {
		w.emitPaneUpdated(p)
	}
	if t.status() != final {
		w.emitStatus(p)
	}
	w.bump()
}

// SetTitle changes the terminal title of paneID, as a program's OSC 0/2
// sequence does; Herdr emits pane_updated for every title change.
func (w *World) SetTitle(paneID, title string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	if p.term.title != nil && *p.term.title == title {
		return nil
	}
	p.term.title = &title
	w.emitPaneUpdated(p)
	w.bump()
	return nil
}

// Rename sets (or, with "", clears) the agent name of paneID without any
// of agent.rename's checks, as a restore or an external tool might.
func (w *World) Rename(paneID, name string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	if name == "" {
		p.term.name = nil
	} else {
		p.term.name = &name
	}
	w.emitPaneUpdated(p)
	w.bump()
	return nil
}

// Move moves paneID to the end of the first tab of workspace wsID, as
// pane.move does: a cross-workspace move gives the pane a new id and
// keeps the old one as a pane.* alias. It returns the new id.
func (w *World) Move(paneID, wsID string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return "", err
	}
	ws := w.workspaceByArg(wsID)
	if ws == nil {
		return "", fmt.Errorf("sockettest: no workspace %s", wsID)
	}
	res := w.movePane(p, ws.tabs[0], false, false)
	return res.Pane.PaneID, nil
}

// Close closes paneID as pane.close does.
func (w *World) Close(paneID string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	w.closePane(p)
	return nil
}

// Agent returns the agent record of target (a pane id, alias included, or
// an agent name).
func (w *World) Agent(target string) (schema.AgentInfo, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(target)
	if p == nil {
		for _, q := range w.panes() {
			if q.term.name != nil && *q.term.name == target {
				p = q
				break
			}
		}
	}
	if p == nil || !p.term.isAgent() {
		return schema.AgentInfo{}, false
	}
	return w.agentInfo(p), true
}

// Inputs returns every write made to paneID's terminal, in order: prompt
// texts (with paste brackets when on), Copilot's focus-in report, the
// separate Enter ("\r") and whatever [World.Write] typed.
func (w *World) Inputs(paneID string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return nil
	}
	return append([]string(nil), p.term.writes...)
}

// Prompts returns the text of each agent.prompt Herdr accepted for
// paneID's terminal, in order, as the request carried it (no paste
// brackets, no Enter).
func (w *World) Prompts(paneID string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return nil
	}
	return append([]string(nil), p.term.prompts...)
}

// Submissions returns the user turns the agents in paneID received,
// oldest first: the exact text each model got, and when. Text waiting in
// a composer or a queue is not a submission yet.
func (w *World) Submissions(paneID string) []Submission {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return nil
	}
	return append([]Submission(nil), p.term.subs...)
}

// Interrupts is how many turns of paneID's agent lost their partial
// answer to a submission that steered them (codex while working).
func (w *World) Interrupts(paneID string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return 0
	}
	if m, ok := p.term.recv.(*model); ok {
		return m.interrup
	}
	return 0
}

// Composer returns what paneID's agent holds unsent: the composer, and
// the input queued until its turn ends, each as the model would get it.
func (w *World) Composer(paneID string) (composer, queued string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return "", ""
	}
	if m, ok := p.term.recv.(*model); ok {
		return m.k.merge(m.composer), m.k.merge(m.queue)
	}
	return "", ""
}

// SetBehaviour changes how the modelled agent in paneID reacts from now
// on (stuck composer, turn time, submit latency, bracketed paste).
func (w *World) SetBehaviour(paneID string, b Behaviour) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	m, ok := p.term.recv.(*model)
	if !ok {
		return fmt.Errorf("sockettest: pane %s hosts no modelled agent", paneID)
	}
	m.b = b
	return nil
}

// Write writes data to paneID's terminal as typed input (a user typing, a
// test injecting keys): the agent program reads it as Herdr's writes.
// "\r" is Enter; ESC[200~ … ESC[201~ is a paste.
func (w *World) Write(paneID, data string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	w.write(p.term, data)
	return nil
}

// write records one write to t and hands it to its program (w.mu held).
func (w *World) write(t *terminal, data string) {
	t.writes = append(t.writes, data)
	if t.recv != nil {
		t.recv.input(data)
	}
	w.bump()
}

// bracketed reports whether Herdr would send t a paste (w.mu held).
func (t *terminal) bracketed() bool { return t.recv != nil && t.recv.bracketedPaste() }

// paneOfTerm finds the pane t is in now (w.mu held); nil once closed.
func (w *World) paneOfTerm(t *terminal) *pane {
	for _, p := range w.panes() {
		if p.term == t {
			return p
		}
	}
	return nil
}

// Read returns what pane.read shows for paneID: for an agent pane, the
// turns it received and its composer with the kind's screen signs; for a
// shell, what was typed into it.
func (w *World) Read(paneID string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return ""
	}
	return screenText(p.term, true)
}

func screenText(t *terminal, strip bool) string {
	return screenOf(t, schema.ReadSourceVisible, strip)
}

// screenOf is what pane.read shows of t from source: a real program's
// terminal screen (styled unless strip), else the receiver's, else what
// was typed.
func screenOf(t *terminal, source schema.ReadSource, strip bool) string {
	if t.prog != nil {
		return t.prog.Screen(source != schema.ReadSourceVisible, !strip)
	}
	if t.recv != nil {
		return t.recv.screen()
	}
	return screen(t, strip)
}

// Typed returns everything written to paneID's terminal as text, with
// escape sequences removed and Enter as a line break.
func (w *World) Typed(paneID string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return ""
	}
	return screen(p.term, true)
}

// Screen is [World.Typed], kept for existing callers. It is what was typed
// into the pane, not what pane.read shows ([World.Read]) nor what the
// agent received ([World.Submissions]).
func (w *World) Screen(paneID string) string { return w.Typed(paneID) }

func screen(t *terminal, strip bool) string {
	var b strings.Builder
	for _, s := range t.writes {
		if s == "\r" {
			b.WriteString("\n")
			continue
		}
		if strip {
			s = stripANSI(s)
		}
		b.WriteString(s)
	}
	return b.String()
}

func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && !(s[j] >= 0x40 && s[j] <= 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// PaneIDs returns the current pane ids in layout order.
func (w *World) PaneIDs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ids []string
	for _, p := range w.panes() {
		ids = append(ids, p.id)
	}
	return ids
}

// IDs returns every id of the world, past and present: workspaces, tabs,
// panes (and their aliases) and terminals. Privacy tests look for these in
// model-facing text.
func (w *World) IDs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	set := map[string]bool{}
	for _, ws := range w.workspaces {
		set[ws.id] = true
		for _, t := range ws.tabs {
			set[t.id] = true
			for _, p := range t.panes {
				set[p.id] = true
				set[p.term.id] = true
			}
		}
	}
	for a, p := range w.aliases {
		set[a] = true
		set[p.term.id] = true
	}
	for _, id := range w.events.ids {
		set[id] = true
	}
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// AddAgents appends n named agents (agent-<i>, kind claude, idle) in new
// panes of tab tabID, for scale tests. It returns their pane ids.
func (w *World) AddAgents(tabID string, n int, prefix string) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.tabByID(tabID)
	if t == nil {
		return nil, fmt.Errorf("sockettest: no tab %s", tabID)
	}
	ids := make([]string, 0, n)
	for i := 0; i < n; i++ {
		t.ws.paneSeq++
		p := &pane{id: t.ws.id + ":p" + EncodeNumber(uint64(t.ws.paneSeq)), tab: t, cwd: "/work"}
		p.term = w.newTerminal()
		_ = w.occupy(p.term, &AgentSpec{Kind: "claude", Name: fmt.Sprintf("%s%d", prefix, i), Status: "idle"})
		t.panes = append(t.panes, p)
		ids = append(ids, p.id)
	}
	return ids, nil
}
