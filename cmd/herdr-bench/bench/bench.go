package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/sibling"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

type benchConfig struct {
	sim        bool
	agents     int
	workspaces int
	pollRead   bool
	simTick    time.Duration // the simulator's event and wait tick
	n, warmup  int
	conc       int
	ops        []string
	routes     []string
	format     string
	sweep      bool
	cli        string
	count      int
	spawns     int
	alt        map[string]string // label → herdr-link binary (routes mcp:label)
	yes        bool
	// link is -link: the herdr-link binary of the mcp route.
	link string
	// herdr is the simulated Herdr release of this measurement ("": the
	// simulator's default); worlds lists those of the whole run.
	herdr  string
	worlds []string
}

// route is one way of doing an operation.
type route struct {
	name  string
	run   func(ctx context.Context, op string) error
	close func()
	proc  *proc // the route's server process, if it has one
	// skip lists the ops the route cannot do.
	skip map[string]bool
}

// The ops. send is herdr-link's fast delivery (return once Herdr accepted
// the prompt); send-confirm also watches the target for its submission.
const (
	opPeers       = "peers"
	opSend        = "send"
	opSendConfirm = "send-confirm"
)

// benchSubmitHold is the -submit-hold of the MCP route's servers on the
// simulator, whose Enter comes 5 ms after the text instead of 300 ms.
const benchSubmitHold = 10 * time.Millisecond

type sample struct {
	op, route string
	d         time.Duration
	penalty   bool
}

type stat struct {
	Op         string  `json:"op"`
	Route      string  `json:"route"`
	N          int     `json:"n"`
	MinMS      float64 `json:"min_ms"`
	P50MS      float64 `json:"p50_ms"`
	P90MS      float64 `json:"p90_ms"`
	P99MS      float64 `json:"p99_ms"`
	MaxMS      float64 `json:"max_ms"`
	MeanNS     float64 `json:"mean_ns"`
	OpsPerSec  float64 `json:"ops_per_sec"`
	ConnsPerOp float64 `json:"conns_per_op"`
	ProcsPerOp float64 `json:"procs_per_op"`
	VsSocket   float64 `json:"ratio_to_socket_p50"`
	Penalties  int     `json:"poll_penalties"`
	// VsFloorP50 and VsFloorP99 are p50 and p99 as ratios to the floor
	// route's in the same run (0 without the floor route).
	VsFloorP50 float64 `json:"ratio_to_floor_p50"`
	VsFloorP99 float64 `json:"ratio_to_floor_p99"`
	// CPUPerOpUS is the route's server process CPU time per call, µs
	// (user + system from its rusage, start-up excluded; 0 for routes
	// without a server process).
	CPUPerOpUS float64 `json:"cpu_us_per_op"`
	// HasCPU: the route has a server process, so CPUPerOpUS is measured
	// (it can be 0: with few calls the start-up's own noise can exceed
	// them, and the figure is clamped at 0).
	HasCPU bool `json:"has_server_process"`
}

func bench(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-bench [flags]", "Measures peer resolution and tool calls side by side: herdr-link's socket route, the reference's herdr CLI route, and tools/call over MCP.", stderr)
	c := benchConfig{}
	fs.BoolVar(&c.sim, "sim", false, "run against an embedded simulator (default when HERDR_SOCKET_PATH is not set)")
	fs.IntVar(&c.agents, "agents", 100, "agents in the simulated world")
	fs.IntVar(&c.workspaces, "workspaces", 2, "workspaces the simulated agents are spread over")
	fs.BoolVar(&c.pollRead, "poll-read", false, "reproduce Herdr's 100 ms first-read sleep in the simulator")
	fs.DurationVar(&c.simTick, "sim-tick", sockettest.PollInterval, "the simulator's tick of event subscriptions and waits (Herdr: 100ms); a shorter one shows what events written as they happen would give")
	fs.IntVar(&c.n, "n", 200, "measured operations per op and route")
	fs.IntVar(&c.warmup, "warmup", 20, "warm-up operations per op and route")
	fs.IntVar(&c.conc, "c", 1, "operations in flight per route")
	ops := fs.String("op", "peers,send,send-confirm", "operations: peers, send (delivery fast), send-confirm (delivery confirm: until the target's turn starts)")
	routes := fs.String("route", "socket,cli,mcp,floor", "routes: socket (herdr-link's), cli (the reference's herdr CLI calls), mcp (tools/call on a herdr-link server), floor (a minimal relay process: what the machine allows)")
	fs.StringVar(&c.format, "format", "table", "output: table, gobench (benchstat input), json")
	fs.BoolVar(&c.sweep, "sweep", false, "also sweep socket peer resolution over 10, 100, 1000 and 10000 agents")
	fs.StringVar(&c.cli, "herdr", "", "herdr CLI for the cli route (default: $HERDR_BIN_PATH live, herdr-sim beside herdr-bench, then on PATH, on the simulator)")
	fs.StringVar(&c.link, "link", "", "the herdr-link binary of the mcp route and the start-up timing (default: herdr-link beside herdr-bench, then on PATH)")
	fs.IntVar(&c.count, "count", 1, "repeat the whole measurement (for benchstat)")
	fs.IntVar(&c.spawns, "spawns", 10, "MCP server starts to time (start → initialize response)")
	fs.BoolVar(&c.yes, "yes", false, "against a live Herdr, allow the sends: they type real prompts into the agent named bench-peer of this pane's workspace")
	worlds := fs.String("herdr-version", "", "simulated Herdr releases, comma-separated (0.8.2,0.9.1): the whole measurement runs once per world, in one run")
	alt := fs.String("mcp-alt", "", "also measure other herdr-link binaries as MCP routes `label=path,…` (routes mcp:label), for before and after in one run")
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "herdr-bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	c.ops, c.routes = strings.Split(*ops, ","), strings.Split(*routes, ",")
	if *alt != "" {
		c.alt = map[string]string{}
		for _, kv := range strings.Split(*alt, ",") {
			label, path, ok := strings.Cut(kv, "=")
			if !ok || label == "" || path == "" {
				fmt.Fprintf(stderr, "herdr-bench: -mcp-alt %q: want label=path\n", kv)
				return 2
			}
			c.alt[label] = path
			c.routes = append(c.routes, "mcp:"+label)
		}
	}
	// A route named twice (-route mcp:x with -mcp-alt x=…) is measured
	// once: twice would double its samples and its connections per op.
	c.routes = firstOfEach(c.routes)
	if c.n < 1 || c.conc < 1 || c.agents < 2 || c.workspaces < 1 || c.count < 1 {
		fmt.Fprintln(stderr, "herdr-bench: -n, -c, -count and -workspaces must be ≥ 1, -agents ≥ 2")
		return 2
	}
	switch c.format {
	case "table", "gobench", "json":
	default:
		fmt.Fprintln(stderr, "herdr-bench: -format is table, gobench or json")
		return 2
	}
	if os.Getenv("HERDR_SOCKET_PATH") == "" {
		c.sim = true
	}
	if *worlds != "" {
		if !c.sim {
			fmt.Fprintln(stderr, "herdr-bench: -herdr-version needs the simulator (--sim)")
			return 2
		}
		c.worlds = strings.Split(*worlds, ",")
	}
	// Every run times herdr-link's start-up, whatever the routes.
	exe, err := sibling.Find("herdr-link", "link", c.link)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-bench:", err)
		return 1
	}
	c.link = exe
	if err := runWorlds(c, stdin, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "herdr-bench:", err)
		return 1
	}
	return 0
}

// benchWorld builds a world of n agents over w workspaces: bench-self and
// bench-peer in the first, the rest named a<i>.
func benchWorld(n, w int) (*sockettest.World, error) {
	spec, err := sockettest.GeneratedSpec(n, w)
	if err != nil {
		return nil, err
	}
	for _, ws := range spec.Workspaces {
		for _, p := range ws.Tabs[0].Panes {
			// Each agent starts a 1 ms turn 1 ms after Enter: a confirmed
			// send measures herdr-link's watch, not a model's latency.
			one := 1
			p.Agent.TurnMS, p.Agent.SubmitMS = 1, &one
		}
	}
	return sockettest.NewWorld(spec)
}

type target struct {
	path, pane, cli string
	alt             map[string]string // see benchConfig.alt
	link            string            // see benchConfig.link
	srv             *sockettest.Server
	desc            string
	// peers are the send targets, used in turn: consecutive sends to one
	// agent wait for its delivery lock (-submit-hold), which would measure
	// the hold instead of the send.
	peers     []string
	rotations int
	slots     int
}

// rotation returns the route's next send target on each call; the routes
// of one op (slots of them, see openRoutes) start at different points of
// the list so that they do not meet.
func (t *target) rotation() func() string {
	i := t.rotations * len(t.peers) / max(t.slots, 3)
	t.rotations++
	return func() string {
		p := t.peers[i%len(t.peers)]
		i++
		return p
	}
}

func setupTarget(c benchConfig, agents int) (*target, error) {
	t := &target{alt: c.alt, link: c.link}
	if !c.sim {
		g := link.CheckGate(os.Getenv)
		if !g.OK {
			return nil, fmt.Errorf("live target: %s (or use --sim)", g.Reason)
		}
		t.path, t.pane = g.Socket.Path, g.PaneID
		t.cli = c.cli
		if t.cli == "" {
			t.cli = os.Getenv("HERDR_BIN_PATH")
		}
		t.desc = "live Herdr at " + t.path
		t.peers = []string{"bench-peer"}
		return t, nil
	}
	w, err := benchWorld(agents, c.workspaces)
	if err != nil {
		return nil, err
	}
	srv := sockettest.NewUnstartedServer(w)
	srv.PollRead = c.pollRead
	if c.simTick > 0 {
		srv.Tick = c.simTick
	}
	srv.SubmitDelay = 5 * time.Millisecond
	if c.herdr != "" {
		if err := srv.UseHerdr(c.herdr); err != nil {
			return nil, err
		}
	}
	srv.Start()
	t.srv, t.path = srv, srv.Path()
	a, _ := w.Agent("bench-self")
	t.pane = a.PaneID
	var all []string
	for _, id := range w.PaneIDs() {
		if p, ok := w.Agent(id); ok && p.WorkspaceID == a.WorkspaceID && p.Name != nil && *p.Name != "bench-self" {
			all = append(all, *p.Name)
		}
	}
	t.peers = all
	t.cli = c.cli
	if t.cli == "" {
		t.cli, _ = sibling.Find("herdr-sim", "herdr", "")
	}
	t.desc = fmt.Sprintf("embedded simulator (Herdr %s, protocol %d), %d agents in %d workspaces, poll-read %v, event tick %v", srv.Version, srv.Protocol, agents, c.workspaces, c.pollRead, srv.Tick)
	return t, nil
}

func (t *target) close() {
	if t.srv != nil {
		t.srv.Close()
	}
}

func (t *target) env() []string {
	return append(os.Environ(), "HERDR_ENV=1", "HERDR_SOCKET_PATH="+t.path, "HERDR_PANE_ID="+t.pane, "HERDR_BIN_PATH="+t.cli, "HERDR_LINK_LOG=error")
}

func runBench(c benchConfig, stdin io.Reader, stdout, stderr io.Writer) error {
	t, err := setupTarget(c, c.agents)
	if err != nil {
		return err
	}
	defer t.close()
	if err := liveConsent(c, t, stdin, stderr); err != nil {
		return err
	}
	for _, name := range c.routes {
		switch name {
		case "socket", "cli", "mcp", "floor":
		default:
			if _, ok := c.alt[strings.TrimPrefix(name, "mcp:")]; ok && strings.HasPrefix(name, "mcp:") {
				continue
			}
			return fmt.Errorf("unknown route %q", name)
		}
	}
	for _, op := range c.ops {
		if op != opPeers && op != opSend && op != opSendConfirm {
			return fmt.Errorf("unknown op %q", op)
		}
	}
	procs := map[string]float64{"peers/cli": 2, "send/cli": 3}
	base := map[string]time.Duration{}
	for _, name := range c.routes {
		if base[name], err = startupCPU(t, name, 5); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 12))
	prog := &progress{w: stderr, on: isTerminal(stderr), total: c.count * len(c.ops) * len(c.routes) * c.n, start: time.Now()}
	var runs []benchRun
	for i := 0; i < c.count; i++ {
		samples, conns, cpu, err := measure(c, t, rng, base, prog)
		if err != nil {
			prog.finish()
			return err
		}
		runs = append(runs, benchRun{summarize(c, samples, conns, procs, cpu)})
	}
	prog.finish()
	sockFloor, spawnFloor, err := floors(500)
	if err != nil {
		return err
	}
	startup, err := mcpStartup(t, c.spawns)
	if err != nil {
		return err
	}
	var rows []sweepRow
	if c.sweep {
		if rows, err = sweep(c); err != nil {
			return err
		}
	}
	report(stdout, c, t, runs, results{sockFloor: sockFloor, spawnFloor: spawnFloor, startup: startup, rows: rows})
	return nil
}

// firstOfEach returns names without repeats, in the order they first
// appear.
func firstOfEach(names []string) []string {
	seen := map[string]bool{}
	out := names[:0:0]
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
