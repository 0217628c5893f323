// Command herdr-link is the herdr-link/1 MCP server for agents running in
// Herdr panes, with a demo, a probe for live sockets and a benchmark.
//
//	herdr-link                 serve MCP on stdio (what an MCP host runs)
//	herdr-link demo            two agents talking on an embedded simulator
//	herdr-link probe           diagnose the Herdr socket of this pane
//	herdr-link bench           peer-resolution latency, socket vs CLI vs MCP
//	herdr-link version         print the version
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/herdr-link/herdr-link/internal/buildinfo"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/link/mcpserver"
	"github.com/herdr-link/herdr-link/socket"
)

const usage = `usage: herdr-link [command] [flags]

commands:
  (none), serve   serve MCP on stdio; this is what an MCP host runs
  demo            run two agents' MCP sessions against an embedded Herdr simulator
  probe           check this pane's Herdr socket step by step
  bench           measure peer resolution: socket vs herdr CLI vs MCP
  version         print the version

Run 'herdr-link <command> -h' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(args, stdin, stdout, stderr)
	case "demo":
		return demo(args, stdout, stderr)
	case "probe":
		return probe(args, stdout, stderr)
	case "bench":
		return bench(args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "herdr-link", buildinfo.Version())
		return 0
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "herdr-link: unknown command %q\n%s", cmd, usage)
	return 2
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

func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	level := fs.String("log-level", envOr("HERDR_LINK_LOG", "info"), "stderr log level: debug, info, warn, error (env HERDR_LINK_LOG)")
	timeout := fs.Duration("timeout", socket.DefaultTimeout, "deadline of one Herdr socket call")
	noBoot := fs.Bool("no-bootstrap", false, "do not name an unnamed occupant at start-up (it is still named on first use)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log, err := newLogger(stderr, *level)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	l, outside := linkFromEnv(os.Getenv, *timeout, log)
	if err := mcpserver.Serve(ctx, stdin, stdout, mcpserver.Options{
		Link: l, Outside: outside, Version: buildinfo.Version(), Logger: log, Bootstrap: !*noBoot,
	}); err != nil {
		log.Error("serve", "err", err)
		return 1
	}
	return 0
}

// linkFromEnv builds the Link of this pane, or nil and the user-facing
// reason when the environment gate fails (the socket must exist; it is
// not dialled).
func linkFromEnv(getenv func(string) string, timeout time.Duration, log *slog.Logger) (*link.Link, string) {
	g := link.CheckGate(getenv)
	g.CheckSocket(nil)
	if !g.OK {
		log.Warn("not in a Herdr pane: serving an empty tool list", "reason", g.Reason)
		return nil, g.Advice()
	}
	log.Info("herdr-link", "version", buildinfo.Version(), "socket", g.Socket.Path, "socket_rule", g.Socket.Rule, "pane_id", g.PaneID)
	c := &socket.Client{Path: g.Socket.Path, Timeout: timeout, Warn: func(m string) { log.Warn(m) }}
	return &link.Link{Herdr: link.SocketHerdr{Client: c}, PaneID: g.PaneID, Logger: log}, ""
}
