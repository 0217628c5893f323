package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/herdr-link/herdr-link/internal/buildinfo"
	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

type benchConfig struct {
	sim        bool
	agents     int
	workspaces int
	pollRead   bool
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
	fs := cliflag.New("herdr-link bench [flags]", "Measures peer resolution and tool calls side by side: herdr-link's socket route, the reference's herdr CLI route, and tools/call over MCP.", stderr)
	c := benchConfig{}
	fs.BoolVar(&c.sim, "sim", false, "run against an embedded simulator (default when HERDR_SOCKET_PATH is not set)")
	fs.IntVar(&c.agents, "agents", 100, "agents in the simulated world")
	fs.IntVar(&c.workspaces, "workspaces", 2, "workspaces the simulated agents are spread over")
	fs.BoolVar(&c.pollRead, "poll-read", false, "reproduce Herdr's 100 ms first-read sleep in the simulator")
	fs.IntVar(&c.n, "n", 200, "measured operations per op and route")
	fs.IntVar(&c.warmup, "warmup", 20, "warm-up operations per op and route")
	fs.IntVar(&c.conc, "c", 1, "operations in flight per route")
	ops := fs.String("op", "peers,send,send-confirm", "operations: peers, send (delivery fast), send-confirm (delivery confirm: until the target's turn starts)")
	routes := fs.String("route", "socket,cli,mcp,floor", "routes: socket (herdr-link's), cli (the reference's herdr CLI calls), mcp (tools/call on a herdr-link server), floor (a minimal relay process: what the machine allows)")
	fs.StringVar(&c.format, "format", "table", "output: table, gobench (benchstat input), json")
	fs.BoolVar(&c.sweep, "sweep", false, "also sweep socket peer resolution over 10, 100, 1000 and 10000 agents")
	fs.StringVar(&c.cli, "herdr", "", "herdr CLI for the cli route (default: $HERDR_BIN_PATH live, herdr-sim beside this binary on the simulator)")
	fs.IntVar(&c.count, "count", 1, "repeat the whole measurement (for benchstat)")
	fs.IntVar(&c.spawns, "spawns", 10, "MCP server starts to time (start → initialize response)")
	fs.BoolVar(&c.yes, "yes", false, "against a live Herdr, allow the sends: they type real prompts into the agent named bench-peer of this pane's workspace")
	alt := fs.String("mcp-alt", "", "also measure other herdr-link binaries as MCP routes `label=path,…` (routes mcp:label), for before and after in one run")
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "herdr-link bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	c.ops, c.routes = strings.Split(*ops, ","), strings.Split(*routes, ",")
	if *alt != "" {
		c.alt = map[string]string{}
		for _, kv := range strings.Split(*alt, ",") {
			label, path, ok := strings.Cut(kv, "=")
			if !ok || label == "" || path == "" {
				fmt.Fprintf(stderr, "herdr-link bench: -mcp-alt %q: want label=path\n", kv)
				return 2
			}
			c.alt[label] = path
			c.routes = append(c.routes, "mcp:"+label)
		}
	}
	if c.n < 1 || c.conc < 1 || c.agents < 2 || c.workspaces < 1 || c.count < 1 {
		fmt.Fprintln(stderr, "herdr-link bench: -n, -c, -count and -workspaces must be ≥ 1, -agents ≥ 2")
		return 2
	}
	switch c.format {
	case "table", "gobench", "json":
	default:
		fmt.Fprintln(stderr, "herdr-link bench: -format is table, gobench or json")
		return 2
	}
	if os.Getenv("HERDR_SOCKET_PATH") == "" {
		c.sim = true
	}
	if err := runBench(c, stdin, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "herdr-link bench:", err)
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
	t := &target{alt: c.alt}
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
	srv.SubmitDelay = 5 * time.Millisecond
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
		t.cli = findSim()
	}
	t.desc = fmt.Sprintf("embedded simulator (Herdr %s, protocol %d), %d agents in %d workspaces, poll-read %v", srv.Version, srv.Protocol, agents, c.workspaces, c.pollRead)
	return t, nil
}

// findSim looks for herdr-sim beside this binary, then on PATH.
func findSim() string {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "herdr-sim")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("herdr-sim"); err == nil {
		return p
	}
	return ""
}

func (t *target) close() {
	if t.srv != nil {
		t.srv.Close()
	}
}

func (t *target) env() []string {
	return append(os.Environ(), "HERDR_ENV=1", "HERDR_SOCKET_PATH="+t.path, "HERDR_PANE_ID="+t.pane, "HERDR_BIN_PATH="+t.cli, "HERDR_LINK_LOG=error")
}

const benchMessage = "benchmark message: please ignore"

func socketRoute(t *target) *route {
	c := &socket.Client{Path: t.path, Timeout: 30 * time.Second}
	// Both take the target's delivery lock, as herdr-link's server does.
	lock := &panelock.Locker{Scope: t.path}
	hold := time.Duration(0)
	if t.srv != nil {
		hold = benchSubmitHold
	}
	l := &link.Link{Herdr: link.SocketHerdr{Client: c}, PaneID: t.pane, Locker: lock, SubmitHold: hold}
	lc := &link.Link{Herdr: link.SocketHerdr{Client: c}, PaneID: t.pane, Locker: lock, SubmitHold: hold, Delivery: link.DeliveryConfirm}
	next := t.rotation()
	return &route{name: "socket", run: func(ctx context.Context, op string) error {
		var err error
		switch op {
		case opPeers:
			_, err = l.Peers(ctx)
		case opSend:
			_, err = l.Send(ctx, link.SendRequest{To: next(), Message: benchMessage})
		default:
			var r link.SendResult
			r, err = lc.Send(ctx, link.SendRequest{To: next(), Message: benchMessage})
			if err == nil && r.Delivery == link.DeliveryUnconfirmed && t.srv != nil {
				err = errors.New("delivery unconfirmed: the simulated target did not start a turn")
			}
		}
		return err
	}, close: func() {}}
}

// cliRoute does what the reference implementation does: run the herdr CLI
// for each step (each run pings, then sends its request).
func cliRoute(t *target) (*route, error) {
	if t.cli == "" {
		return nil, errors.New("no herdr CLI for the cli route: build herdr-sim beside herdr-link (go build -o bin/ ./cmd/...), or pass --herdr")
	}
	env := t.env()
	runCLI := func(ctx context.Context, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, t.cli, args...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return nil, fmt.Errorf("%s %s: %v: %s", filepath.Base(t.cli), strings.Join(args, " "), err, ee.Stderr)
			}
			return nil, err
		}
		return out, nil
	}
	agent := func(b []byte) (link.Agent, error) {
		var r struct {
			Result struct{ Agent link.Agent } `json:"result"`
		}
		return r.Result.Agent, jsonx.Unmarshal(b, &r)
	}
	next := t.rotation()
	return &route{name: "cli", run: func(ctx context.Context, op string) error {
		out, err := runCLI(ctx, "agent", "get", t.pane)
		if err != nil {
			return err
		}
		self, err := agent(out)
		if err != nil {
			return err
		}
		if op == "peers" {
			out, err = runCLI(ctx, "agent", "list")
			if err != nil {
				return err
			}
			var r struct {
				Result struct{ Agents []link.Agent } `json:"result"`
			}
			if err := jsonx.Unmarshal(out, &r); err != nil {
				return err
			}
			n := 0
			for _, a := range r.Result.Agents {
				if a.WorkspaceID == self.WorkspaceID && a.PaneID != self.PaneID && link.ValidName(a.Name) {
					n++
				}
			}
			_ = n
			return nil
		}
		to := next()
		out, err = runCLI(ctx, "agent", "get", to)
		if err != nil {
			return err
		}
		peer, err := agent(out)
		if err != nil || peer.WorkspaceID != self.WorkspaceID {
			return fmt.Errorf("peer not in workspace: %v", err)
		}
		text, _ := link.Wrap(link.Envelope{Protocol: link.Protocol, ID: link.NewMessageID(time.Now()), From: self.Name, To: to, Message: benchMessage})
		_, err = runCLI(ctx, "agent", "prompt", to, text)
		return err
	}, close: func() {}, skip: map[string]bool{opSendConfirm: true}}, nil
}

// mcpRoute runs a herdr-link server (the -mcp-alt build for "mcp:label")
// in the delivery mode of op, as an MCP host would.
func mcpRoute(t *target, name, op string) (*route, error) {
	mode := "fast"
	if op == opSendConfirm {
		mode = "confirm"
	}
	c, p, err := startMCP(t, t.mcpExe(name), mode)
	if err != nil {
		return nil, err
	}
	next := t.rotation()
	peers := toolCall{Name: "herdr_link_peers", Arguments: struct{}{}}
	return &route{name: name, proc: p, run: func(ctx context.Context, op string) error {
		p.calls.Add(1)
		call := peers
		if op != opPeers {
			call = toolCall{Name: "herdr_link_send", Arguments: sendArgs{To: next(), Message: benchMessage}}
		}
		// Like the floor's client, this one reads the answer line and
		// checks it without decoding the result: what a host does with a
		// result is the host's cost, not the server's. A JSON string never
		// holds a raw `"isError":true`.
		raw, err := c.Call(ctx, "tools/call", call)
		if err == nil && bytes.Contains(raw, isErrorTrue) {
			var r mcpclient.ToolResult
			_ = jsonx.Unmarshal(raw, &r)
			err = errors.New(r.Text())
		}
		return err
	}, close: func() { c.Close() }}, nil
}

var isErrorTrue = []byte(`"isError":true`)

type toolCall struct {
	Name      string `json:"name"`
	Arguments any    `json:"arguments"`
}

type sendArgs struct {
	To      string `json:"to"`
	Message string `json:"message"`
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	if i < 0 {
		i = 0
	}
	return sorted[i]
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

type progress struct {
	w       io.Writer
	on      bool
	total   int
	done    int
	start   time.Time
	mu      sync.Mutex
	started bool
}

func (p *progress) step() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if !p.on || time.Since(p.start) < time.Second {
		return
	}
	p.started = true
	const width = 30
	f := float64(p.done) / float64(p.total)
	fmt.Fprintf(p.w, "\r  [%-*s] %3.0f%%", width, strings.Repeat("=", int(f*width)), f*100)
}

func (p *progress) finish() {
	if p.started {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// measure runs, op by op, warm-up then n rounds over freshly started
// routes in a shuffled order, and returns the samples, the simulator's
// connections per op and route and the server processes' CPU per call
// (µs, start-up excluded).
func measure(c benchConfig, t *target, rng *rand.Rand, base map[string]time.Duration, prog *progress) ([]sample, map[string]float64, map[string]float64, error) {
	ctx := context.Background()
	var samples []sample
	conns := map[string]float64{}
	cpu := map[string]float64{}
	var mu sync.Mutex
	for _, op := range c.ops {
		routes, err := openRoutes(t, c.routes, op)
		if err != nil {
			return nil, nil, nil, err
		}
		fail := func(err error) ([]sample, map[string]float64, map[string]float64, error) {
			closeRoutes(routes)
			return nil, nil, nil, err
		}
		for _, r := range routes {
			if r.skip[op] {
				continue
			}
			for i := 0; i < c.warmup; i++ {
				if err := r.run(ctx, op); err != nil {
					return fail(fmt.Errorf("%s %s warm-up: %w", r.name, op, err))
				}
			}
		}
		reqs := map[string]int{}
		for round := 0; round < (c.n+c.conc-1)/c.conc; round++ {
			for _, r := range shuffled(rng, routes) {
				if r.skip[op] {
					continue
				}
				before := 0
				var penalties int64
				if t.srv != nil {
					before = len(t.srv.Requests())
					penalties = t.srv.PollPenalties()
				}
				var wg sync.WaitGroup
				var firstErr error
				for k := 0; k < c.conc && round*c.conc+k < c.n; k++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						start := time.Now()
						err := r.run(ctx, op)
						d := time.Since(start)
						mu.Lock()
						defer mu.Unlock()
						if err != nil && firstErr == nil {
							firstErr = err
						}
						samples = append(samples, sample{op: op, route: r.name, d: d})
						prog.step()
					}()
				}
				wg.Wait()
				if firstErr != nil {
					return fail(fmt.Errorf("%s %s: %w", r.name, op, firstErr))
				}
				if t.srv != nil {
					reqs[r.name] += len(t.srv.Requests()) - before
					if t.srv.PollPenalties() > penalties {
						for i := len(samples) - 1; i >= 0 && samples[i].route == r.name && samples[i].op == op; i-- {
							samples[i].penalty = true
							if int64(len(samples)-i) >= t.srv.PollPenalties()-penalties {
								break
							}
						}
					}
					t.srv.ResetRequests()
				}
			}
		}
		closeRoutes(routes)
		for _, r := range routes {
			if r.proc != nil {
				cpu[op+"/"+r.name] = cpuPerCall(r, base[r.name])
			}
		}
		for name, n := range reqs {
			conns[op+"/"+name] = float64(n) / float64(c.n)
		}
	}
	return samples, conns, cpu, nil
}

func summarize(c benchConfig, samples []sample, conns, procs, cpu map[string]float64) []stat {
	var out []stat
	for _, op := range c.ops {
		var socketP50, floorP50, floorP99 float64
		for _, rn := range c.routes {
			var ds []time.Duration
			pen := 0
			var sum time.Duration
			for _, s := range samples {
				if s.op == op && s.route == rn {
					ds = append(ds, s.d)
					sum += s.d
					if s.penalty {
						pen++
					}
				}
			}
			if len(ds) == 0 {
				continue
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			st := stat{Op: op, Route: rn, N: len(ds), MinMS: ms(ds[0]), P50MS: ms(percentile(ds, 50)), P90MS: ms(percentile(ds, 90)),
				P99MS: ms(percentile(ds, 99)), MaxMS: ms(ds[len(ds)-1]), MeanNS: float64(sum.Nanoseconds()) / float64(len(ds)),
				ConnsPerOp: conns[op+"/"+rn], ProcsPerOp: procs[op+"/"+rn], Penalties: pen}
			st.CPUPerOpUS, st.HasCPU = cpu[op+"/"+rn]
			// Throughput: concurrency over mean latency.
			st.OpsPerSec = float64(c.conc) / (st.MeanNS / 1e9)
			switch rn {
			case "socket":
				socketP50 = st.P50MS
			case "floor":
				floorP50, floorP99 = st.P50MS, st.P99MS
			}
			out = append(out, st)
		}
		for i := range out {
			if out[i].Op == op && socketP50 > 0 {
				out[i].VsSocket = out[i].P50MS / socketP50
			}
			if out[i].Op == op && floorP50 > 0 {
				out[i].VsFloorP50, out[i].VsFloorP99 = out[i].P50MS/floorP50, out[i].P99MS/floorP99
			}
		}
	}
	return out
}

// floors measures a bare Unix-socket round trip and a bare process spawn.
func floors(n int) (sock, spawn time.Duration, err error) {
	reply := []byte(`{"id":"1","result":{"type":"ok"}}` + "\n")
	srv, err := sockettest.NewLineServer(func([]byte) []byte { return reply })
	if err != nil {
		return 0, 0, err
	}
	defer srv.Close()
	path := srv.Path()
	var ds, ps []time.Duration
	buf := make([]byte, 256)
	truePath, _ := exec.LookPath("true")
	for i := 0; i < n; i++ {
		start := time.Now()
		c, err := net.Dial("unix", path)
		if err != nil {
			return 0, 0, err
		}
		_, _ = c.Write([]byte(`{"id":"1","method":"ping","params":{}}` + "\n"))
		_, _ = c.Read(buf)
		c.Close()
		ds = append(ds, time.Since(start))
		if truePath != "" && i < 50 {
			start = time.Now()
			if err := exec.Command(truePath).Run(); err != nil {
				return 0, 0, err
			}
			ps = append(ps, time.Since(start))
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return percentile(ds, 50), percentile(ps, 50), nil
}

// mcpStartup times herdr-link's start to its initialize response.
func mcpStartup(t *target, n int) (time.Duration, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	var ds []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		c, err := mcpclient.Start(exe, []string{"serve", "-no-bootstrap", "-log-level", "error"}, t.env())
		if err != nil {
			return 0, err
		}
		_, err = c.Call(context.Background(), "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"}})
		ds = append(ds, time.Since(start))
		c.Close()
		if err != nil {
			return 0, err
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return percentile(ds, 50), nil
}

type sweepRow struct {
	Agents      int     `json:"agents"`
	P50MS       float64 `json:"p50_ms"`
	P99MS       float64 `json:"p99_ms"`
	AllocsPerOp float64 `json:"allocs_per_op"`
	BytesPerOp  float64 `json:"bytes_per_op"`
	ListBytes   int     `json:"agent_list_bytes"`
}

func sweep(c benchConfig) ([]sweepRow, error) {
	var rows []sweepRow
	for _, n := range []int{10, 100, 1000, 10000} {
		cc := c
		cc.sim = true
		t, err := setupTarget(cc, n)
		if err != nil {
			return nil, err
		}
		r := socketRoute(t)
		ctx := context.Background()
		iters := 200
		if n >= 10000 {
			iters = 30
		} else if n >= 1000 {
			iters = 100
		}
		for i := 0; i < 5; i++ {
			if err := r.run(ctx, "peers"); err != nil {
				t.close()
				return nil, err
			}
		}
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		var ds []time.Duration
		for i := 0; i < iters; i++ {
			start := time.Now()
			if err := r.run(ctx, "peers"); err != nil {
				t.close()
				return nil, err
			}
			ds = append(ds, time.Since(start))
		}
		runtime.ReadMemStats(&ms1)
		raw, _ := t.srv.Client().RoundTrip(ctx, []byte(`{"id":"x","method":"agent.list","params":{}}`))
		t.close()
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		rows = append(rows, sweepRow{Agents: n, P50MS: ms(percentile(ds, 50)), P99MS: ms(percentile(ds, 99)),
			AllocsPerOp: float64(ms1.Mallocs-ms0.Mallocs) / float64(iters), BytesPerOp: float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(iters), ListBytes: len(raw)})
	}
	return rows, nil
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			if _, v, ok := strings.Cut(l, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown CPU"
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
	type run struct {
		stats []stat
	}
	var runs []run
	for i := 0; i < c.count; i++ {
		samples, conns, cpu, err := measure(c, t, rng, base, prog)
		if err != nil {
			prog.finish()
			return err
		}
		runs = append(runs, run{summarize(c, samples, conns, procs, cpu)})
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
	machine := fmt.Sprintf("%s/%s, %d CPUs, %s, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), runtime.Version())
	switch c.format {
	case "json":
		b, _ := jsonx.MarshalIndent(map[string]any{
			"version": buildinfo.Version(), "machine": machine, "target": t.desc, "n": c.n, "warmup": c.warmup, "concurrency": c.conc,
			"runs": runs[len(runs)-1].stats, "floors": map[string]float64{"unix_round_trip_ms": ms(sockFloor), "process_spawn_ms": ms(spawnFloor)},
			"mcp_start_to_initialize_ms": ms(startup), "sweep": rows,
		})
		fmt.Fprintln(stdout, string(b))
	case "gobench":
		fmt.Fprintf(stdout, "goos: %s\ngoarch: %s\npkg: github.com/herdr-link/herdr-link/cmd/herdr-link\ncpu: %s\n", runtime.GOOS, runtime.GOARCH, cpuModel())
		suffix := fmt.Sprintf("-%d", runtime.GOMAXPROCS(0))
		for _, r := range runs {
			for _, s := range r.stats {
				fmt.Fprintf(stdout, "BenchmarkRoute/op=%s/route=%s%s\t%d\t%.0f ns/op\t%.0f p50-ns/op\t%.0f p99-ns/op\t%.2f conns/op\t%.0f procs/op",
					s.Op, s.Route, suffix, s.N, s.MeanNS, s.P50MS*1e6, s.P99MS*1e6, s.ConnsPerOp, s.ProcsPerOp)
				if s.VsFloorP50 > 0 {
					fmt.Fprintf(stdout, "\t%.3f floor-ratio\t%.3f floor-ratio-p99", s.VsFloorP50, s.VsFloorP99)
				}
				if s.HasCPU {
					fmt.Fprintf(stdout, "\t%.1f cpu-us/op", s.CPUPerOpUS)
				}
				fmt.Fprintln(stdout)
			}
		}
		fmt.Fprintf(stdout, "BenchmarkFloor/what=unix-round-trip%s\t500\t%.0f ns/op\n", suffix, float64(sockFloor.Nanoseconds()))
		fmt.Fprintf(stdout, "BenchmarkFloor/what=process-spawn%s\t50\t%.0f ns/op\n", suffix, float64(spawnFloor.Nanoseconds()))
		fmt.Fprintf(stdout, "BenchmarkMCPStart%s\t%d\t%.0f ns/op\n", suffix, c.spawns, float64(startup.Nanoseconds()))
		for _, row := range rows {
			fmt.Fprintf(stdout, "BenchmarkSweep/op=peers/route=socket/agents=%d%s\t1\t%.0f ns/op\t%.0f allocs/op\t%.0f B/op\n", row.Agents, suffix, row.P50MS*1e6, row.AllocsPerOp, row.BytesPerOp)
		}
	default:
		fmt.Fprintf(stdout, "herdr-link bench (herdr-link %s)\n", buildinfo.Version())
		fmt.Fprintf(stdout, "target:  %s\n", t.desc)
		fmt.Fprintf(stdout, "machine: %s\n", machine)
		fmt.Fprintf(stdout, "run:     n=%d per op and route, interleaved, warm-up %d, concurrency %d\n\n", c.n, c.warmup, c.conc)
		fmt.Fprintf(stdout, "%-12s %-7s %8s %8s %8s %8s %8s %9s %9s %9s %9s %8s %9s %9s %9s\n", "op", "route", "min ms", "p50 ms", "p90 ms", "p99 ms", "max ms", "ops/s", "conns/op", "procs/op", "×socket", "poll-pen", "p50×floor", "p99×floor", "cpu µs/op")
		for _, s := range runs[len(runs)-1].stats {
			fmt.Fprintf(stdout, "%-12s %-7s %8.3f %8.3f %8.3f %8.3f %8.3f %9.0f %9.2f %9.0f %9s %8d %9s %9s %9s\n",
				s.Op, s.Route, s.MinMS, s.P50MS, s.P90MS, s.P99MS, s.MaxMS, s.OpsPerSec, s.ConnsPerOp, s.ProcsPerOp, socketCell(s.VsSocket), s.Penalties,
				ratioCell(s.VsFloorP50), ratioCell(s.VsFloorP99), cpuCell(s.CPUPerOpUS, s.HasCPU))
		}
		if t.srv != nil && slices.Contains(c.ops, opSendConfirm) {
			fmt.Fprintf(stdout, "\ndelivery: send = -delivery fast, send-confirm = -delivery confirm (watching until the target's turn starts: 50 ms agent.get probes);\n          the simulated targets submit 1 ms after Enter, Enter comes 5 ms after the text (Herdr: 300 ms), -submit-hold %v;\n          sends go to the %d peers in turn (consecutive sends to one agent wait for its lock)\n", benchSubmitHold, len(t.peers))
		}
		fmt.Fprintf(stdout, "\nfloors:  bare Unix-socket round trip p50 %.3f ms; bare process spawn p50 %.3f ms\n", ms(sockFloor), ms(spawnFloor))
		fmt.Fprintf(stdout, "mcp:     herdr-link start → initialize response p50 %.2f ms (%d starts)\n", ms(startup), c.spawns)
		if len(rows) > 0 {
			fmt.Fprintf(stdout, "\nsweep: socket peer resolution by session size\n%8s %10s %10s %12s %12s %14s\n", "agents", "p50 ms", "p99 ms", "allocs/op", "bytes/op", "agent.list B")
			for _, r := range rows {
				fmt.Fprintf(stdout, "%8d %10.3f %10.3f %12.0f %12.0f %14d\n", r.Agents, r.P50MS, r.P99MS, r.AllocsPerOp, r.BytesPerOp, r.ListBytes)
			}
		}
	}
	return nil
}
