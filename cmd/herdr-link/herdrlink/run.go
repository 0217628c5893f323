// Package herdrlink is the herdr-link command: the herdr-link/1 MCP
// server for agents running in Herdr panes, and the few verbs that serve
// it. It links no simulator, MCP client or test harness (the demo is
// 'herdr-sim demo', the benchmark is herdr-bench).
//
//	herdr-link                 serve MCP on stdio (what an MCP host runs)
//	herdr-link probe           diagnose the Herdr socket of this pane
//	herdr-link config HOST     the snippet that registers herdr-link with a host
//	herdr-link outbox          list (and cancel) the messages held for busy agents
//	herdr-link deliver         one pass of the courier (the plugin's hooks)
//	herdr-link version         print the version
//	herdr-link help [command]  usage, or one command's flags
package herdrlink

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/herdr-link/herdr-link/internal/buildinfo"
	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/link/mcpserver"
	"github.com/herdr-link/herdr-link/socket"
)

const usageTemplate = `herdr-link: the herdr-link/1 MCP server for agents in Herdr panes.

usage: herdr-link [command] [flags]

commands:
  (none), serve   serve MCP on stdio; this is what an MCP host runs
  probe           check this pane's Herdr socket step by step
  config HOST     print the snippet that registers herdr-link with a host
{{hosts}}  outbox          list the messages held for busy agents of this Herdr
  outbox cancel   cancel held messages (IDs, or --all)
  deliver         type what is due now for one agent (-pane) or all (-all),
                  then exit: the plugin's hooks, or a hook or timer of yours
  version         print the version (also --version)
  help [command]  print this text, or one command's usage and flags

Run 'herdr-link help <command>' or 'herdr-link <command> -h' for a command's flags.
The demo is 'herdr-sim demo'; the benchmark is herdr-bench.
`

// usage is the top-level help; its host list comes from the hosts table,
// so that it names every host config knows.
var usage = strings.Replace(usageTemplate, "{{hosts}}", wrapList(hostNames(), 18, 78), 1)

// hostNames lists the names config accepts, in the table's order.
func hostNames() []string {
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Name
	}
	return names
}

// wrapList writes names as "(a, b, …)" lines of at most width columns,
// each indented by indent spaces.
func wrapList(names []string, indent, width int) string {
	var b strings.Builder
	line := strings.Repeat(" ", indent) + "("
	for i, n := range names {
		item := n
		if i < len(names)-1 {
			item += ","
		} else {
			item += ")"
		}
		if len(line)+len(item)+1 > width && strings.TrimSpace(line) != "(" {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = strings.Repeat(" ", indent+1)
		}
		line += item + " "
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
	return b.String()
}

// command is one subcommand's entry point. Each accepts -h.
type command func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

// commands are the verbs besides version and help; a new verb is one
// entry here and its usage line above.
var commands = map[string]command{
	"serve":  serve,
	"probe":  func(args []string, _ io.Reader, stdout, stderr io.Writer) int { return probe(args, stdout, stderr) },
	"config": func(args []string, _ io.Reader, stdout, stderr io.Writer) int { return config(args, stdout, stderr) },
	"outbox": func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		return outboxVerb(args, stdout, stderr)
	},
	"deliver": func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		return deliverVerb(args, stdout, stderr)
	},
}

// moved names the verbs that left this binary, and where they went.
var moved = map[string]string{
	"demo":        "herdr-sim demo",
	"bench":       "herdr-bench",
	"bench-relay": "herdr-bench relay",
}

// Main is the herdr-link command on the process's arguments and standard
// streams; it returns the exit code.
func Main() int {
	if len(os.Args) == 1 && isTerminal(os.Stdin) {
		fmt.Fprintln(os.Stderr, "herdr-link is an MCP server on stdio: an MCP host (Claude Code, Codex, …) starts it and speaks JSON-RPC on its stdin. 'herdr-link help' lists the commands; Ctrl-D ends.")
	}
	return Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Run runs herdr-link with args (without the program name) and returns
// the exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch {
		case cliflag.IsHelp(args[0]):
			return help(nil, stdout, stderr)
		case cliflag.IsVersion(args[0]):
			args = []string{"version"}
		}
	}
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "version":
		fmt.Fprintln(stdout, "herdr-link", buildinfo.Version())
		return 0
	case "help":
		return help(args, stdout, stderr)
	}
	if f, ok := commands[cmd]; ok {
		return f(args, stdin, stdout, stderr)
	}
	if to, ok := moved[cmd]; ok {
		fmt.Fprintf(stderr, "herdr-link: %q is not a herdr-link command: run '%s' (the MCP server links no simulator or MCP client)\n", cmd, to)
		return 2
	}
	fmt.Fprintf(stderr, "herdr-link: unknown command %q\n\n%s", cmd, usage)
	return 2
}

// help prints the overview with serve's flags, or one command's usage.
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage, "\n")
		fs, _ := serveFlags(stdout)
		fs.Usage()
		return 0
	}
	switch args[0] {
	case "version":
		fmt.Fprint(stdout, "usage: herdr-link version\n\nPrints the version; 'herdr-link --version' is the same.\n")
		return 0
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	f, ok := commands[args[0]]
	if to, gone := moved[args[0]]; !ok && gone {
		fmt.Fprintf(stderr, "herdr-link help: %q is not a herdr-link command: see '%s -h'\n", args[0], to)
		return 2
	}
	if !ok {
		fmt.Fprintf(stderr, "herdr-link help: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	return f([]string{"-h"}, nil, stdout, stderr)
}

// newLogger writes to stderr at level (debug, info, warn, error).
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

type serveConfig struct {
	level   string
	timeout time.Duration
	noBoot  bool
	// delivery is the -delivery mode (confirm by default).
	delivery link.DeliveryMode
	// submitHold is -submit-hold.
	submitHold time.Duration
	// settleGap is -settle-gap.
	settleGap time.Duration
	// holdFor is -hold.
	holdFor time.Duration
	// replyGrace, requestTTL and noNotices are -reply-grace,
	// -request-ttl and -no-notices.
	replyGrace, requestTTL time.Duration
	noNotices              bool
}

func serveFlags(stderr io.Writer) (*flag.FlagSet, *serveConfig) {
	c := &serveConfig{}
	fs := cliflag.New("herdr-link [serve] [flags]", "Serves MCP on stdin and stdout for the agent of this Herdr pane; logs go to stderr.", stderr)
	fs.StringVar(&c.level, "log-level", envOr("HERDR_LINK_LOG", "info"), "stderr log level: debug, info, warn, error (env HERDR_LINK_LOG)")
	fs.DurationVar(&c.timeout, "timeout", link.DefaultCallTimeout, "overall deadline of one tool call's Herdr work, every socket call included (and of the start-up bootstrap); must be positive")
	fs.BoolVar(&c.noBoot, "no-bootstrap", false, "do not name an unnamed occupant at start-up (it is still named on first use)")
	c.delivery = link.DeliveryConfirm
	fs.Func("delivery", "after Herdr accepts a message: confirm (watch the target for its submission: 2.5 s + 60 ms per KiB, at most 30 s; the default) or fast (return at once, delivery \"unconfirmed\")", func(v string) (err error) {
		c.delivery, err = link.ParseDeliveryMode(v)
		return err
	})
	fs.DurationVar(&c.holdFor, "hold", link.DefaultHoldFor, "how long a message for a busy agent waits at most before it expires (undelivered)")
	fs.DurationVar(&c.replyGrace, "reply-grace", link.DefaultReplyGrace, "how long a recipient whose turn with a request ended has to answer it before the request counts as handled")
	fs.DurationVar(&c.requestTTL, "request-ttl", link.DefaultRequestTTL, "how long a request is tracked at most before it expires")
	fs.BoolVar(&c.noNotices, "no-notices", false, "never type notices into this agent's pane when its requests end without a reply (herdr_link_wait and peers still tell)")
	fs.DurationVar(&c.submitHold, "submit-hold", link.SubmitHold, "how long a delivery keeps its target's lock at least, unless its submission is seen sooner (Herdr types Enter 300 ms after the text; lower it only for a simulator with a shorter delay); at most 30s")
	fs.DurationVar(&c.settleGap, "settle-gap", link.DefaultSettleGap, "a held message is typed only after two readings of its target this far apart agree (Herdr's state can flap); 0 trusts one reading (for measurements only); at most 5s")
	return fs, c
}

func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, c := serveFlags(stderr)
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "herdr-link: unexpected arguments %q (see 'herdr-link help')\n", fs.Args())
		return 2
	}
	cfg, msg := c.linkConfig()
	if msg != "" {
		fmt.Fprintln(stderr, "herdr-link:", msg)
		return 2
	}
	// A host that closes its end of stderr must not kill the server: with
	// SIGPIPE handled, a write to a broken stderr (or stdout) returns
	// EPIPE instead of ending the process. Logs that cannot be written are
	// dropped; a broken stdout ends the session through Serve.
	stopSigpipe := ignoreSIGPIPE()
	defer stopSigpipe()
	// A log line never blocks: a host that does not read stderr fills
	// the pipe, and lines are then dropped and counted (see asyncWriter).
	aw := newAsyncWriter(&dropWriter{w: stderr}, logBuffer)
	defer aw.Close(logFlushWait)
	stderr = aw
	log, err := newLogger(stderr, c.level)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	l, outside, err := linkFromEnv(os.Getenv, cfg, log)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link:", err)
		return 2
	}
	stdin, restore := pollable(stdin)
	defer restore()
	procs := serveProcs(os.Getenv)
	log.Debug("mcp: serving", "procs", procs)
	if err := mcpserver.Serve(ctx, stdin, stdout, mcpserver.Options{
		Link: l, Outside: outside, Version: buildinfo.Version(), Logger: log, Bootstrap: !c.noBoot,
	}); err != nil {
		log.Error("serve", "err", err)
		return 1
	}
	return 0
}

// linkFromEnv builds the Link of this pane from the flags' cfg, or nil
// and the user-facing reason when the environment gate fails (the socket
// must exist; it is not dialled).
func linkFromEnv(getenv func(string) string, cfg link.Config, log *slog.Logger) (*link.Link, string, error) {
	g := link.CheckGate(getenv)
	g.CheckSocket(nil)
	if !g.OK {
		log.Warn("not in a Herdr pane: serving an empty tool list", "reason", g.Reason)
		return nil, g.Advice(), nil
	}
	log.Info("herdr-link", "version", buildinfo.Version(), "socket", g.Socket.Path, "socket_rule", g.Socket.Rule, "pane_id", g.PaneID)
	c := &socket.Client{Path: g.Socket.Path, Timeout: cfg.CallTimeout, Warn: func(m string) { log.Warn(m) },
		AfterLargeAnswer: newReleaser().soon}
	pl := &panelock.Locker{Scope: g.Socket.Path, Roots: e2eLockRoots()}
	cfg.Herdr, cfg.PaneID, cfg.Logger = link.NewSocketHerdr(c), g.PaneID, log
	cfg.Locker, cfg.Outbox, cfg.CrashAt = link.FileLocks(pl), openOutbox(pl, log), e2eCrashAt()
	if cfg.Outbox != nil {
		cfg.Outbox.Spares = true // a server lives long: its store keeps spare files
	}
	l, err := link.New(cfg)
	return l, "", err
}

// openOutbox opens the outbox beside the lock directory, or returns nil
// (messages to a busy target then fail instead of waiting) when the lock
// directory is not private. The store keeps no spare files (a one-shot
// pass would create them only to remove them at its end): the server
// turns them on.
func openOutbox(pl *panelock.Locker, log *slog.Logger) *outbox.Store {
	dir, err := pl.DirPath()
	if err != nil {
		log.Error("no outbox: messages to a busy agent cannot wait", "err", err)
		return nil
	}
	st, err := outbox.Open(dir, pl.ScopeID())
	if err != nil {
		log.Error("no outbox: messages to a busy agent cannot wait", "err", err)
		return nil
	}
	st.Log = log
	if err := st.NoteSocket(pl.Scope, socketScope); err != nil {
		log.Warn("outbox: socket not recorded (stores of gone sockets are not pruned)", "err", err)
	}
	return st
}

// socketScope is the identity of the socket at path, as a store is keyed
// by it.
func socketScope(path string) string { return (&panelock.Locker{Scope: path}).ScopeID() }

// dropWriter writes to w until a write fails, then drops everything: a log
// line nobody can read is not worth an error or a retry.
type dropWriter struct {
	mu     sync.Mutex
	w      io.Writer
	broken bool
}

func (d *dropWriter) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.broken {
		return len(p), nil
	}
	if _, err := d.w.Write(p); err != nil {
		d.broken = true
	}
	return len(p), nil
}
