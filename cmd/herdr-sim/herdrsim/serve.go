package herdrsim

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/schemalite"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/ptypane"
)

type faultFlags []string

func (f *faultFlags) String() string     { return strings.Join(*f, ",") }
func (f *faultFlags) Set(v string) error { *f = append(*f, v); return nil }

// parseFault reads METHOD:KIND[=ARG]; METHOD "*" means every method.
func parseFault(spec string) (string, sockettest.Fault, error) {
	var f sockettest.Fault
	method, kind, ok := strings.Cut(spec, ":")
	if !ok {
		return "", f, fmt.Errorf("fault %q: want METHOD:KIND[=ARG]", spec)
	}
	if method == "*" {
		method = ""
	}
	kind, arg, _ := strings.Cut(kind, "=")
	switch kind {
	case "latency":
		d, err := time.ParseDuration(arg)
		if err != nil {
			return "", f, fmt.Errorf("fault %q: %v", spec, err)
		}
		f.Latency = d
	case "hang":
		f.Hang = true
	case "drop":
		f.DropBeforeResponse = true
	case "drop-mid":
		f.DropMidResponse = true
	case "garbage":
		f.Garbage = true
	case "wrong-id":
		f.WrongID = true
	case "oversize":
		n, err := strconv.Atoi(arg)
		if err != nil || n <= 0 {
			return "", f, fmt.Errorf("fault %q: oversize needs a byte count", spec)
		}
		f.OversizeBytes = n
	case "error":
		code, msg, _ := strings.Cut(arg, ":")
		if code == "" {
			return "", f, fmt.Errorf("fault %q: error needs CODE[:MESSAGE]", spec)
		}
		f.Error = &schema.ErrorBody{Code: code, Message: msg}
	default:
		return "", f, fmt.Errorf("fault %q: unknown kind %q (latency, hang, drop, drop-mid, garbage, wrong-id, oversize, error)", spec, kind)
	}
	return method, f, nil
}

// serveConfig is what serve's flags ask for.
type serveConfig struct {
	path, worldFile, version, validate string
	pollRead, herdrOnly                bool
	protocol                           uint
	commands, faults, startCommands    faultFlags
}

func serveFlags(stderr io.Writer) (*flag.FlagSet, *serveConfig) {
	c := &serveConfig{}
	fs := cliflag.New("herdr-sim serve [flags]", "Serves a simulated Herdr socket until SIGINT or SIGTERM and prints the HERDR_* lines a pane would have.", stderr)
	fs.StringVar(&c.path, "socket", "", "socket path (default: a new temporary directory)")
	fs.StringVar(&c.worldFile, "world", "", "world file (default: the built-in world; see 'herdr-sim world')")
	fs.BoolVar(&c.pollRead, "poll-read", false, "reproduce Herdr's 100 ms sleep when a request has not arrived at the first poll")
	fs.UintVar(&c.protocol, "protocol", 0, "protocol number ping reports (default: the release's, 20 for 0.8.2); 19–25 also set that release's version and capabilities; 22 alone simulates Herdr "+sockettest.NewestHerdr)
	fs.StringVar(&c.version, "herdr-version", "", "Herdr release to simulate: 0.8.2, or 0.9.x (its socket behaviour, version and capabilities; default $"+sockettest.EnvHerdrVersion+", else 0.8.2); another version is only reported by ping")
	fs.StringVar(&c.validate, "validate", "", "check every response against this Herdr schema document and report failures on stderr")
	fs.Var(&c.commands, "command", `PANE=JSON-ARGV, repeatable: run a program in PANE's terminal (a pseudo-terminal), e.g. 'w1:p2=["claude"]'; the world file's "command" field also sets its env, dir and size`)
	fs.Var(&c.startCommands, "start-command", `KIND=JSON-ARGV, repeatable: agent.start of KIND runs this program (then the start's args) in the new pane's pseudo-terminal instead of the simulator's model of KIND, e.g. 'claude=["claude"]'`)
	fs.BoolVar(&c.herdrOnly, "herdr-only", false, "answer the simulator-only methods (sim.turns, used by 'herdr-sim turns') as unknown methods, as real Herdr does")
	fs.Var(&c.faults, "fault", "METHOD:KIND[=ARG], repeatable; METHOD * for all; KIND latency=DUR, hang, drop, drop-mid, garbage, wrong-id, oversize=BYTES, error=CODE:MESSAGE")
	return fs, c
}

func serve(args []string, stdout, stderr io.Writer) int {
	fs, c := serveFlags(stderr)
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "herdr-sim serve: unexpected arguments %q\n", fs.Args())
		return 2
	}
	srv, code, err := c.server()
	if err != nil {
		fmt.Fprintln(stderr, "herdr-sim:", err)
		return code
	}
	srv.Logf = func(format string, a ...any) { fmt.Fprintf(stderr, "herdr-sim: "+format+"\n", a...) }
	path := c.path
	if path == "" {
		dir, err := os.MkdirTemp("", "herdr-sim")
		if err != nil {
			fmt.Fprintln(stderr, "herdr-sim:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "herdr.sock")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := srv.StartAt(path); err != nil {
		fmt.Fprintln(stderr, "herdr-sim:", err)
		return 1
	}
	defer srv.Close()
	fmt.Fprintf(stdout, "HERDR_ENV=1\nHERDR_SOCKET_PATH=%s\nHERDR_PANE_ID=%s\n", srv.Path(), firstNamedPane(srv.World))
	if f, ok := stdout.(*os.File); ok {
		_ = f.Sync()
	}
	fmt.Fprintf(stderr, "herdr-sim: Herdr %s (protocol %d) listening on %s; %d panes; Ctrl-C to stop\n", srv.Version, srv.Protocol, srv.Path(), len(srv.World.PaneIDs()))
	<-ctx.Done()
	fmt.Fprintf(stderr, "herdr-sim: stopping after %d requests\n", len(srv.Requests()))
	return 0
}

// server builds the unstarted server the flags describe; on error, code
// is the exit code (2 for a bad flag value, 1 otherwise).
func (c *serveConfig) server() (srv *sockettest.Server, code int, err error) {
	var w *sockettest.World
	if c.worldFile != "" {
		if w, err = sockettest.LoadWorld(c.worldFile); err != nil {
			return nil, 1, err
		}
	} else {
		w = sockettest.DefaultWorld()
	}
	srv = sockettest.NewUnstartedServer(w)
	srv.Programs = ptypane.Start
	for _, cmd := range c.commands {
		pane, spec, err := parseCommand(cmd)
		if err != nil {
			return nil, 2, err
		}
		if err := w.SetCommand(pane, spec); err != nil {
			return nil, 2, err
		}
	}
	for _, cmd := range c.startCommands {
		kind, spec, err := parseCommand(cmd)
		if err != nil {
			return nil, 2, err
		}
		w.SetStartProgram(kind, spec.Argv)
	}
	srv.PollRead = c.pollRead
	srv.HerdrOnly = c.herdrOnly
	if code, err := useRelease(srv, c.version, c.protocol); err != nil {
		return nil, code, err
	}
	if c.validate != "" {
		v, err := schemalite.Load(c.validate)
		if err != nil {
			return nil, 1, err
		}
		srv.Check = v.Line
	}
	for _, spec := range c.faults {
		m, f, err := parseFault(spec)
		if err != nil {
			return nil, 2, err
		}
		srv.SetFault(m, f)
	}
	return srv, 0, nil
}

// parseCommand reads PANE=JSON-ARGV.
func parseCommand(v string) (string, sockettest.CommandSpec, error) {
	var spec sockettest.CommandSpec
	pane, argv, ok := strings.Cut(v, "=")
	if !ok || pane == "" {
		return "", spec, fmt.Errorf("command %q: want PANE=JSON-ARGV, e.g. 'w1:p2=[\"claude\"]'", v)
	}
	if err := jsonx.UnmarshalStrict([]byte(argv), &spec.Argv); err != nil || len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return "", spec, fmt.Errorf("command %q: the argv must be a JSON array of strings naming a program", v)
	}
	return pane, spec, nil
}

func firstNamedPane(w *sockettest.World) string {
	for _, id := range w.PaneIDs() {
		if a, ok := w.Agent(id); ok && a.Name != nil {
			return id
		}
	}
	if ids := w.PaneIDs(); len(ids) > 0 {
		return ids[0]
	}
	return ""
}

// --- the herdr CLI's verbs ---
