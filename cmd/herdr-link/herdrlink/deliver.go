package herdrlink

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket"
)

// Bounds of 'herdr-link deliver'.
const (
	// deliverCallTimeout is the deadline of each of its socket calls.
	deliverCallTimeout = 2 * time.Second
	// deliverBound is the longest it runs: past it, it exits even with a
	// delivery under way (what was claimed is never typed twice; the
	// next pass ends it as maybe delivered).
	deliverBound = 9500 * time.Millisecond
	// deliverStartupBound is that bound for the pass after a restore.
	deliverStartupBound = 25 * time.Second
)

// The environment a Herdr plugin hook runs with (Herdr's plugin
// documentation, "Commands and environment").
const (
	envPluginEvent     = "HERDR_PLUGIN_EVENT"
	envPluginEventJSON = "HERDR_PLUGIN_EVENT_JSON"
)

// hookEvent is the part of a hook's HERDR_PLUGIN_EVENT_JSON (Herdr's
// event envelope) deliver reads.
type hookEvent struct {
	Event string `json:"event"`
	Data  struct {
		PaneID      string `json:"pane_id"`
		AgentStatus string `json:"agent_status"`
	} `json:"data"`
}

// parseHookEvent reads a hook's event: the pane it names, and whether
// that pane's agent just became busy (working or blocked), when nothing
// can be typed into it. It fails on anything that is not an event
// envelope naming a pane.
func parseHookEvent(b []byte) (pane string, busy bool, err error) {
	var ev hookEvent
	if err := jsonx.Unmarshal(b, &ev); err != nil {
		return "", false, fmt.Errorf("%s is not a Herdr event: %v", envPluginEventJSON, err)
	}
	if ev.Data.PaneID == "" {
		return "", false, fmt.Errorf("%s names no pane (event %q)", envPluginEventJSON, ev.Event)
	}
	switch ev.Data.AgentStatus {
	case "working", "blocked":
		busy = true
	}
	return ev.Data.PaneID, busy, nil
}

type deliverConfig struct {
	pane  string
	all   bool
	level string
}

func deliverFlags(stderr io.Writer) (*flag.FlagSet, *deliverConfig) {
	c := &deliverConfig{}
	fs := cliflag.New("herdr-link deliver [flags]",
		"Types the messages held for busy agents of this Herdr that no running herdr-link server moves any more "+
			"(their sender's server exited), and the notices due, then exits. Run by the plugin's hooks: on "+
			"pane.agent_status_changed for the pane the event names (HERDR_PLUGIN_EVENT_JSON), at startup for every "+
			"pane. From a hook or timer of your own, pass -pane or -all. Quiet when nothing is due; done within 10 s "+
			"(25 s for every pane).\nExit status: 0 done (also when nothing was due), 1 the pass failed, 2 misuse.", stderr)
	fs.StringVar(&c.pane, "pane", "", "serve only the agent of this pane id (default: the pane of HERDR_PLUGIN_EVENT_JSON)")
	fs.BoolVar(&c.all, "all", false, "serve every agent of this Herdr (the startup hook's pass; default when HERDR_PLUGIN_EVENT=startup)")
	fs.StringVar(&c.level, "log-level", envOr("HERDR_LINK_LOG", "info"), "stderr log level: debug, info, warn, error (env HERDR_LINK_LOG)")
	return fs, c
}

// deliverVerb is 'herdr-link deliver'. Exit codes: 0 done (also when
// nothing was due), 1 the pass failed, 2 bad usage or environment.
func deliverVerb(args []string, stdout, stderr io.Writer) int {
	fs, c := deliverFlags(stderr)
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "herdr-link deliver: unexpected arguments %q\n", fs.Args())
		return 2
	}
	return runDeliver(c, os.Getenv, stderr)
}

func runDeliver(c *deliverConfig, getenv func(string) string, stderr io.Writer) int {
	stopSigpipe := ignoreSIGPIPE()
	defer stopSigpipe()
	stderr = &dropWriter{w: stderr}
	log, err := newLogger(stderr, c.level)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link deliver:", err)
		return 2
	}
	pane, bound := c.pane, deliverBound
	switch {
	case c.all && pane != "":
		fmt.Fprintln(stderr, "herdr-link deliver: -pane and -all exclude each other")
		return 2
	case c.all || (pane == "" && getenv(envPluginEvent) == "startup"):
		pane, bound = "", deliverStartupBound
	case pane == "":
		raw := getenv(envPluginEventJSON)
		if raw == "" {
			fmt.Fprintln(stderr, "herdr-link deliver: no pane to serve: not run by a Herdr hook (no "+envPluginEventJSON+"); pass -pane ID or -all")
			return 2
		}
		p, busy, err := parseHookEvent([]byte(raw))
		if err != nil {
			fmt.Fprintln(stderr, "herdr-link deliver:", err)
			return 2
		}
		if busy {
			return 0 // its agent just began a turn: nothing can be typed now
		}
		pane = p
	}
	res, err := socket.ResolvePath(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link deliver: Herdr's socket cannot be located:", err)
		return 2
	}
	pl := &panelock.Locker{Scope: res.Path, Roots: e2eLockRoots()}
	st := openOutbox(pl, log)
	if st == nil {
		return 1 // openOutbox logged why
	}
	defer st.Release()
	cl := &socket.Client{Path: res.Path, Timeout: deliverCallTimeout, Warn: func(m string) { log.Warn(m) }}
	l, err := link.New(link.Config{Herdr: link.NewSocketHerdr(cl), Logger: log, CallTimeout: deliverCallTimeout,
		Locker: link.FileLocks(pl), Outbox: st, CrashAt: e2eCrashAt(),
		ConfirmBudget: func(n int) time.Duration { return min(link.ConfirmBudget(n), link.OnceBudget) }})
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link deliver:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// Probes and claims stop at this deadline (2.5 s for an event, 18 s
	// at startup); a typing begun before it ends by the bound: its socket
	// calls (one call deadline together), its confirmation watch
	// (OnceBudget) and the hold after Herdr's answer (inside the watch).
	ctx, cancel := context.WithTimeout(ctx, bound-link.OnceBudget-deliverCallTimeout-time.Second)
	defer cancel()
	// The pass's own bounds end it in time; this one only catches a
	// stall outside them (a file system that hangs).
	watchdog := time.AfterFunc(bound, func() {
		log.Error("deliver: still running at its bound; exiting", "bound", bound)
		os.Exit(1)
	})
	defer watchdog.Stop()
	rep, err := l.DeliverOnce(ctx, pane)
	wctx, wcancel := context.WithTimeout(context.Background(), l.LongestHold())
	_ = l.Wait(wctx) // keep the lock until Herdr's Enter is past
	wcancel()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Error("deliver", "err", err)
		return 1
	}
	if rep.Typed+rep.Ended > 0 {
		log.LogAttrs(context.Background(), slog.LevelInfo, "deliver: held messages moved", slog.Int("typed", rep.Typed), slog.Int("ended", rep.Ended))
	}
	return 0
}
