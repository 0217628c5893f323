package herdrstate

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herdr-link/herdr-link/schema"
)

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
	gen        uint64 // bumped on every state change
	listGen    uint64 // gen of listCache
	listCache  []byte // the agent_list result object at listGen
	// progs counts running pane programs' watchers and closers.
	progs        sync.WaitGroup
	closingProgs bool // the server is closing: no new programs
	clock        Clock
	// release is the simulated Herdr release (nil: 0.8.2); stalled,
	// queued and lastSubmit belong to its prompt model (herdr09.go).
	release    *Release
	stalled    map[*terminal]bool
	queued     map[*terminal][]*submission
	lastSubmit *submission
	f95        faults095 // fault modes and 0.9.2–0.9.5 state (herdr095.go)
	// agent.start (handlers_start.go): outcomes per kind, the delay to
	// readiness, the argv of every start, the kinds that run a program,
	// and what starts such a program (the server's RunCommand).
	startOutcomes map[string]StartOutcome
	startDelay    time.Duration
	started       [][]string
	startPrograms map[string][]string
	runProgram    func(paneID string, argv []string)
}

// bump records a state change (w.mu held).
func (w *World) bump() { w.gen++ }

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
	flap             time.Duration // see World.SetPromptFlap
	seq              uint64
	revision         uint64
	writes           []string     // every write to the terminal
	prompts          []string     // the text of each accepted agent.prompt
	recv             reader       // the program reading the terminal; nil for a shell
	subs             []Submission // the turns its agents received
	prog             Program      // a real program in the terminal (its screen outlives it)
	title            *string      // terminal title (OSC 0/2)
	session          *schema.AgentSessionInfo
	skipDetection    bool
	meta             metadata          // reported by an integration
	hook             *hookAuthority    // the last state an integration reported (pane.report_agent)
	hookSeqs         map[string]uint64 // the last seq accepted per report source
	detLabel         *string           // while hook is set: the detected agent label
	fallback         schema.AgentStatus
	// fallbackAfterHook: the detected state was observed after the last
	// report (a visible dialog then overrides the report).
	fallbackAfterHook bool
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

// ErrNoPane is returned by World methods for a pane that does not exist.
var ErrNoPane = errors.New("sockettest: no such pane")

func (w *World) lockedPane(paneID string) (*pane, error) {
	p := w.paneByTarget(paneID)
	if p == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoPane, paneID)
	}
	return p, nil
}

// visible reports (w.mu held) whether the user sees p: it is in the active
// tab of the active workspace (the focused pane's tab) and the outer
// terminal is focused.
func (w *World) visible(p *pane) bool {
	return w.focused != nil && p.tab == w.focused.tab && !w.unfocused
}

// paneOfTerm finds the pane t is in now (w.mu held); nil once closed.
func (w *World) paneOfTerm(t *terminal) *pane {
	for _, p := range w.panes() {
		if p.term == t {
			return p
		}
	}
	return nil
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
