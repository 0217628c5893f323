package start

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/herdr-link/herdr-link/link/deliver"
)

// The placements of a started agent.
const (
	PlaceRight = "right" // a split to the right of the anchor (the default)
	PlaceDown  = "down"  // a split below the anchor
	PlaceTab   = "tab"   // a new tab of the caller's workspace
)

// Bounds of a start's args.
const (
	MaxArgs     = 32
	MaxArgBytes = 4096
	MaxArgsSum  = 16 << 10
)

// DefaultTimeout bounds the wait for a started agent to become ready when
// Config.Timeout is zero (Herdr's own default for agent.start).
const DefaultTimeout = 30 * time.Second

// Pane is a pane as Herdr reports it.
type Pane struct {
	PaneID      string `json:"pane_id"`
	WorkspaceID string `json:"workspace_id"`
	TerminalID  string `json:"terminal_id"`
}

// Herdr is what every start asks of Herdr's control plane; one that can
// start agents is a [Starter] too.
type Herdr interface {
	// GetAgent is agent.get.
	GetAgent(ctx context.Context, target string) (deliver.Agent, error)
	// ClosePane is pane.close.
	ClosePane(ctx context.Context, paneID string) error
}

// Starter is the part of Herdr's control plane that creates panes and
// starts agents in them.
type Starter interface {
	// SplitPane is pane.split beside anchor ("right" or "down"), unfocused.
	SplitPane(ctx context.Context, anchor, direction, cwd string) (Pane, error)
	// CreateTab is tab.create in workspace, unfocused; it returns the root pane.
	CreateTab(ctx context.Context, workspace, cwd, label string) (Pane, error)
	// StartAgent is agent.start.
	StartAgent(ctx context.Context, paneID, name, kind string, args []string, timeout time.Duration) (deliver.Agent, error)
	// ListPanes is pane.list of one workspace.
	ListPanes(ctx context.Context, workspace string) ([]PaneRecord, error)
}

// PaneRecord is a pane as pane.list shows it: where it is and whether an
// agent runs in it.
type PaneRecord struct {
	PaneID, TabID, WorkspaceID string
	Agent                      bool
}

// Request is what a model asks a start to do. Exactly one of Kind and
// Agent is set; Args only with Kind.
type Request struct {
	Name      string
	Kind      string
	Agent     string
	Args      []string
	Placement string
	Beside    string
	Cwd       string
	Message   string
}

// Result is what a start returns: the new agent's name and state, and
// when a first message was given, its id and delivery as the send
// reports them.
type Result struct {
	Status   string `json:"status"`
	Agent    string `json:"agent"`
	State    string `json:"state"`
	ID       string `json:"id,omitempty"`
	Delivery string `json:"delivery,omitempty"`
}

// Place is where a start goes, as the caller's resolution has it.
type Place struct {
	// Anchor is the pane a split goes beside: the caller's, or the peer's
	// the request named Beside.
	Anchor string
	// Workspace is the caller's workspace.
	Workspace string
	// Taken: an agent of the caller's workspace has the name.
	Taken bool
}

// Ports is what the protocol above a start supplies: the caller's
// resolution, the send of a first message and the errors it owns.
type Ports interface {
	// Place resolves the caller (naming it if need be) and finds where an
	// agent named name goes (beside the peer beside, when set). Its
	// errors are the resolution's (an unknown peer among them).
	Place(ctx context.Context, name, beside string) (Place, error)
	// Send delivers a first message to the started agent.
	Send(ctx context.Context, to, message string) (id, delivery string, err error)
	// Undeliverable is the error of a first message that no send takes,
	// or nil.
	Undeliverable(message string) error
	// NoStarter is the error of a Herdr that cannot start agents.
	NoStarter() error
	// HerdrFailed is the error of a Herdr call that failed.
	HerdrFailed(method string, err error) error
	// Refusal reports whether err is Herdr's answer refusing the call (or
	// the call refused before it was sent).
	Refusal(err error) bool
	// Ended is the error of a call whose ctx ended.
	Ended(ctx context.Context) error
}

// Config is what a [Launcher] is made of.
type Config struct {
	Herdr  Herdr
	Ports  Ports
	Logger *slog.Logger
	// Dir is the caller's working directory (the process's when empty):
	// configured agents are looked up from it upward and cwd resolves
	// against it. Home bounds both (the user's home when empty).
	Dir, Home string
	// Timeout bounds the wait for a started agent to become ready
	// (DefaultTimeout when zero); Poll is the interval of its readings
	// (100 ms when zero).
	Timeout, Poll time.Duration
	// Limit and Window bound starts: at most Limit in any Window
	// (DefaultLimit, DefaultWindow when zero).
	Limit  int
	Window time.Duration
	// CallTimeout bounds each Herdr call.
	CallTimeout time.Duration
}

// Launcher starts agents; it is safe for concurrent use.
type Launcher struct {
	cfg Config

	mu       sync.Mutex
	variants map[string]int // guarded by mu: input.go's round robin
	starts   rate           // guarded by mu: limit.go's window
}

// New returns a Launcher of cfg.
func New(cfg Config) *Launcher {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Launcher{cfg: cfg}
}

func (l *Launcher) log() *slog.Logger { return l.cfg.Logger }

// bound gives ctx the deadline of one Herdr call (an earlier deadline of
// ctx stays).
func (l *Launcher) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, l.cfg.CallTimeout)
}
