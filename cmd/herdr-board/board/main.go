package board

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket"
)

const usage = `Shows the conversation of the agents of this Herdr workspace: the agents and
their states, the messages held for busy agents (from → to, age, why), the
open requests (who awaits whom), and recent outcomes and notices. It reads
Herdr (HERDR_SOCKET_PATH, else the socket of HERDR_SESSION or of the default
session) and herdr-link's outbox, refreshes on Herdr's status events and every
second, and never types anything into a pane.

Started from a Herdr pane (HERDR_WORKSPACE_ID or HERDR_PANE_ID set: a pane,
or the plugin's board pane), it shows only that pane's workspace; elsewhere,
every workspace of that Herdr.

keys: ↑/↓ select a held message, c cancel it (asks first; it is never
typed), q quit.`

// callTimeout bounds each of the board's socket calls.
const callTimeout = 2 * time.Second

// Main is herdr-board on args (without the program name); it returns the
// exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fl := cliflag.New("herdr-board [flags]", usage, stderr)
	once := fl.Bool("once", false, "print the view once and exit (for scripts), without colours when stdout is not a terminal")
	width := fl.Int("width", 0, "with -once: wrap at this many columns (0: no limit)")
	if code, done := cliflag.Parse(fl, args, stdout); done {
		return code
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "herdr-board: unexpected arguments %q\n", fl.Args())
		return 2
	}
	src, pl, h, err := open(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-board:", err)
		return 1
	}
	if *once {
		ctx, cancel := context.WithTimeout(context.Background(), 2*callTimeout)
		defer cancel()
		lipgloss.Fprint(stdout, Render(src.Collect(ctx), UI{Selected: -1}, *width))
		return 0
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	p := tea.NewProgram(newModel(src, pl, watch(ctx, src, h)), tea.WithInput(stdin), tea.WithOutput(stdout))
	if _, err := p.Run(); err != nil {
		fmt.Fprintln(stderr, "herdr-board:", err)
		return 1
	}
	return 0
}

// open finds Herdr's socket, the workspace to show and the outbox.
func open(getenv func(string) string) (Source, *panelock.Locker, link.SocketHerdr, error) {
	res, err := socket.ResolvePath(getenv)
	if err != nil {
		return Source{}, nil, link.SocketHerdr{}, fmt.Errorf("the Herdr socket cannot be located: %w", err)
	}
	if fi, err := os.Stat(res.Path); err != nil || fi.Mode()&fs.ModeSocket == 0 {
		return Source{}, nil, link.SocketHerdr{}, fmt.Errorf("no Herdr socket at %s (chosen by %s): is Herdr running?", res.Path, res.Rule)
	}
	h := link.NewSocketHerdr(&socket.Client{Path: res.Path, Timeout: callTimeout})
	ws, err := workspace(getenv, h)
	if err != nil {
		return Source{}, nil, h, err
	}
	pl := &panelock.Locker{Scope: res.Path}
	src := Source{Agents: h.ListAgents, Workspace: ws, Now: time.Now}
	if dir, err := pl.DirPath(); err == nil {
		src.Store, _ = outbox.Open(dir, pl.ScopeID())
	}
	return src, pl, h, nil
}

// workspace is the workspace of the pane the board was started from:
// HERDR_WORKSPACE_ID (a plugin pane gets it), else the workspace_id of
// HERDR_PLUGIN_CONTEXT_JSON (a popup has no pane of its own), else that
// of HERDR_PANE_ID; "" (every workspace) outside Herdr (no HERDR_ENV=1). A pane that cannot be looked up
// is an error, never a reason to show every workspace.
func workspace(getenv func(string) string, h link.Herdr) (string, error) {
	if ws := getenv("HERDR_WORKSPACE_ID"); ws != "" {
		return ws, nil
	}
	var pc struct {
		WorkspaceID string `json:"workspace_id"`
	}
	if raw := getenv("HERDR_PLUGIN_CONTEXT_JSON"); raw != "" && jsonx.Unmarshal([]byte(raw), &pc) == nil && pc.WorkspaceID != "" {
		return pc.WorkspaceID, nil
	}
	pane := getenv("HERDR_PANE_ID")
	switch {
	case pane == "" && getenv("HERDR_ENV") == "1":
		return "", errors.New("started inside Herdr, but neither HERDR_WORKSPACE_ID nor HERDR_PANE_ID says which workspace; the board shows one workspace only")
	case pane == "":
		return "", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	p, err := h.GetPane(ctx, pane)
	if err != nil {
		return "", fmt.Errorf("the workspace of this pane cannot be looked up (%v); the board shows one workspace only", err)
	}
	if p.WorkspaceID == "" {
		return "", errors.New("no workspace reported for this pane; the board shows one workspace only")
	}
	return p.WorkspaceID, nil
}

// watch sends a value on the returned channel (coalesced) for each status
// change of the agents shown, while ctx lasts; nil when Herdr streams no
// events (the board then refreshes on its timer only).
func watch(ctx context.Context, src Source, h link.SocketHerdr) <-chan struct{} {
	lctx, cancel := context.WithTimeout(ctx, callTimeout)
	agents, err := src.Agents(lctx)
	cancel()
	if err != nil {
		return nil
	}
	var panes []string
	for _, a := range agents {
		if src.Workspace == "" || a.WorkspaceID == src.Workspace {
			panes = append(panes, a.PaneID)
		}
	}
	if len(panes) == 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, callTimeout)
	ev, err := h.WatchPanes(wctx, panes)
	cancel()
	if err != nil {
		return nil
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		defer ev.Close()
		for {
			if _, err := ev.Next(ctx); err != nil {
				return
			}
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	return ch
}
