package herdrlink

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/herdr-link/herdr-link/internal/buildinfo"
	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket"
)

// Check verdicts.
const (
	pass = "pass"
	warn = "warn"
	fail = "fail"
	skip = "skip"
)

// check is one line of the probe's report. The report is for operators:
// ids may appear in it.
type check struct {
	Name   string  `json:"name"`
	Status string  `json:"status"`
	MS     float64 `json:"ms"`
	Detail string  `json:"detail"`
	Fix    string  `json:"fix,omitempty"`
}

type prober struct {
	getenv  func(string) string
	timeout time.Duration
	client  *socket.Client
	checks  []check
	gate    link.Gate
	raw     bool
	out     io.Writer
}

func (p *prober) add(name, status string, start time.Time, detail, fix string) {
	p.checks = append(p.checks, check{Name: name, Status: status, MS: float64(time.Since(start).Microseconds()) / 1000, Detail: detail, Fix: fix})
}

// call sends one request through the client's raw-but-classified call
// (the lines are shown and validated by trace) and decodes the result
// into v.
func (p *prober) call(ctx context.Context, method string, params, v any) ([]byte, time.Duration, error) {
	start := time.Now()
	_, line, err := p.client.CallRaw(ctx, "probe:"+method, method, params, v)
	return line, time.Since(start), err
}

// newClient is the probe's socket client: every exchange passes through
// trace, including those of the server's own resolution (Diagnose).
func (p *prober) newClient(path string, protocol socket.ProtocolPolicy) *socket.Client {
	return &socket.Client{Path: path, Timeout: p.timeout, Protocol: protocol, Trace: p.trace}
}

// trace prints the exact lines with -raw.
func (p *prober) trace(req, resp []byte) {
	if p.raw {
		fmt.Fprintf(p.out, "  → %s\n", req)
		if resp != nil {
			fmt.Fprintf(p.out, "  ← %s\n", resp)
		}
	}
}

// movedFlags are the probe's former flags whose work moved to another binary
// (herdr-link, which runs in every agent's pane, links only the server
// and the diagnosis), with where it went.
var movedFlags = map[string]string{
	"mcp":      "-mcp moved: run 'herdr-bench mcp [COMMAND ARGS...]' (herdr-link links no MCP client)",
	"record":   "-record moved: run 'herdr-sim record FILE' (recording Herdr's traffic is the simulator's work)",
	"validate": "-validate moved: run 'herdr-sim validate SCHEMA_FILE' (checking Herdr's answers against a schema document is the simulator's work)",
}

func probe(args []string, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-link probe [flags] [-- COMMAND ARGS...]", "Checks this pane's Herdr socket step by step and says what to fix. The MCP handshake against herdr-link (or another server) is 'herdr-bench mcp [COMMAND ARGS...]'.", stderr)
	asJSON := fs.Bool("json", false, "print a machine-readable report")
	timeout := fs.Duration("timeout", 2*time.Second, "deadline of each step")
	callMethod := fs.String("call", "", "send METHOD (with an optional PARAMS_JSON argument) and print the response")
	raw := fs.Bool("raw", false, "print the exact request and response lines")
	_ = fs.String("validate", "", "moved to 'herdr-sim validate SCHEMA_FILE'")
	watch := fs.Bool("watch", false, "print agent status changes and pane events until interrupted")
	_ = fs.Bool("mcp", false, "moved to 'herdr-bench mcp [COMMAND ARGS...]' (herdr-link links no MCP client)")
	_ = fs.String("record", "", "moved to 'herdr-sim record FILE'")
	if code, done := cliflag.Parse(fs, flagsFirst(fs, args), stdout); done {
		return code
	}
	for _, name := range []string{"mcp", "record", "validate"} {
		if flagSet(fs, name) {
			fmt.Fprintln(stderr, "herdr-link probe: "+movedFlags[name])
			return 2
		}
	}
	p := &prober{getenv: os.Getenv, timeout: *timeout, raw: *raw, out: stdout}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	switch {
	case *callMethod != "":
		return p.callOne(ctx, *callMethod, fs.Args(), stdout, stderr)
	case *watch:
		return p.watch(ctx, stdout, stderr)
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "herdr-link probe: unexpected arguments", fs.Args())
		return 2
	}
	ok := p.run(ctx)
	if *asJSON {
		b, _ := jsonx.MarshalIndent(struct {
			Version string  `json:"version"`
			OK      bool    `json:"ok"`
			Checks  []check `json:"checks"`
		}{buildinfo.Version(), ok, p.checks})
		fmt.Fprintln(stdout, string(b))
	} else {
		p.print(stdout)
	}
	if !ok {
		return 1
	}
	return 0
}

// flagSet reports whether the flag name was given on the command line
// (even with an empty value).
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// flagsFirst moves flags (and their values) ahead of positional
// arguments, so "--call METHOD PARAMS --raw" parses as written. After
// -mcp, the first positional argument starts the command to run, and
// everything from there on is that command's ("--mcp npx -y pkg").
func flagsFirst(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	mcp := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		name := strings.TrimLeft(a, "-")
		if !strings.HasPrefix(a, "-") || name == "" {
			if mcp {
				pos = append(pos, args[i:]...)
				break
			}
			pos = append(pos, a)
			continue
		}
		if name == "mcp" || name == "mcp=true" {
			mcp = true
		}
		flags = append(flags, a)
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil {
			if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); !(ok && bf.IsBoolFlag()) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		}
	}
	return append(flags, pos...)
}
