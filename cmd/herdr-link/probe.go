package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/herdr-link/herdr-link/internal/buildinfo"
	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/internal/schemalite"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
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
	getenv   func(string) string
	timeout  time.Duration
	client   *socket.Client
	validate *schemalite.Validator
	checks   []check
	gate     link.Gate
	raw      bool
	out      io.Writer
}

func (p *prober) add(name, status string, start time.Time, detail, fix string) {
	p.checks = append(p.checks, check{Name: name, Status: status, MS: float64(time.Since(start).Microseconds()) / 1000, Detail: detail, Fix: fix})
}

// call sends one request as raw lines (so they can be shown and validated)
// and decodes the result into v.
func (p *prober) call(ctx context.Context, method string, params, v any) ([]byte, time.Duration, error) {
	req, err := jsonx.Marshal(struct {
		ID     string `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params"`
	}{"probe:" + method, method, params})
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	line, err := p.client.RoundTrip(ctx, req)
	rtt := time.Since(start)
	if p.raw {
		fmt.Fprintf(p.out, "  → %s\n", req)
		if err == nil {
			fmt.Fprintf(p.out, "  ← %s\n", line)
		}
	}
	if err != nil {
		return nil, rtt, err
	}
	if p.validate != nil {
		if verr := p.validate.Line(line); verr != nil {
			p.add("schema: "+method, fail, start, "the response does not match the schema document:\n"+indent(verr.Error()),
				"the server and the schema document are from different Herdr versions")
		}
	}
	var env struct {
		ID     string            `json:"id"`
		Result jsonx.RawMessage  `json:"result"`
		Error  *schema.ErrorBody `json:"error"`
	}
	if err := jsonx.Unmarshal(line, &env); err != nil {
		return line, rtt, fmt.Errorf("%w: %v", socket.ErrMalformedResponse, err)
	}
	if env.Error != nil {
		return line, rtt, socket.Refusal(method, env.Error)
	}
	if env.Result == nil {
		return line, rtt, fmt.Errorf("%w: no result", socket.ErrMalformedResponse)
	}
	if v != nil {
		if err := jsonx.Unmarshal(env.Result, v); err != nil {
			return line, rtt, fmt.Errorf("%w: %v", socket.ErrMalformedResponse, err)
		}
	}
	return line, rtt, nil
}

func indent(s string) string {
	return "      " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n      ")
}

func transportFix(err error, res socket.Resolution) string {
	var ue *socket.UnavailableError
	if f := socket.Fix(err); f != "" && !errors.As(err, &ue) {
		return f
	}
	switch {
	case errors.As(err, &ue):
		return fmt.Sprintf("start Herdr: run `%s` (it creates %s)", ue.Hint, res.Path)
	case errors.Is(err, socket.ErrTimeout):
		return "Herdr accepted the connection but did not answer in time: it is hung or overloaded; restart it with `herdr server stop` then `herdr`"
	case errors.Is(err, socket.ErrMalformedResponse), errors.Is(err, socket.ErrEmptyResponse), errors.Is(err, socket.ErrTruncatedResponse):
		return "something other than Herdr's API answers on this socket; check that the path is Herdr's herdr.sock (not herdr-client.sock)"
	}
	return "check the socket path and permissions"
}

// run performs the checks in order and returns whether all passed.
func (p *prober) run(ctx context.Context) bool {
	g := link.CheckGate(p.getenv)
	p.gate = g
	start := time.Now()
	envDetail := fmt.Sprintf("HERDR_ENV=%q HERDR_PANE_ID=%q HERDR_SOCKET_PATH=%q HERDR_SESSION=%q; socket %s (chosen by %s)",
		p.getenv("HERDR_ENV"), p.getenv("HERDR_PANE_ID"), p.getenv("HERDR_SOCKET_PATH"), p.getenv("HERDR_SESSION"), g.Socket.Path, g.Socket.Rule)
	if g.OK {
		p.add("environment", pass, start, envDetail, "")
	} else {
		p.add("environment", fail, start, envDetail+"; "+g.Reason,
			"not in a Herdr pane: start your agent from a pane Herdr manages (Herdr sets HERDR_ENV, HERDR_PANE_ID and HERDR_SOCKET_PATH)")
	}
	res := g.Socket
	if res.Path == "" {
		return p.finish()
	}
	p.client = &socket.Client{Path: res.Path, Timeout: p.timeout, Protocol: socket.ProtocolOff}

	start = time.Now()
	fi, err := os.Lstat(res.Path)
	derr := err
	if err == nil && fi.Mode()&os.ModeSocket == 0 {
		// What the client meets when dialing it: name it and its fix.
		derr = syscall.ECONNREFUSED
	}
	var envErr *socket.EnvError
	switch {
	case errors.As(socket.DiagnoseDial(res.Path, derr), &envErr):
		p.add("socket file", fail, start, envErr.Path+": "+envErr.Cause, envErr.Fix)
		return p.finish()
	case err != nil:
		hint := "herdr"
		if res.Rule == socket.RuleSession {
			hint = "herdr session attach " + res.Session
		}
		p.add("socket file", fail, start, fmt.Sprintf("%s: %v", res.Path, err), fmt.Sprintf("Herdr is not running: start it with `%s`", hint))
		return p.finish()
	case fi.Mode()&os.ModeSocket == 0:
		p.add("socket file", fail, start, fmt.Sprintf("%s is a %v, not a socket", res.Path, fi.Mode().Type()), "remove the file and start Herdr again")
		return p.finish()
	default:
		uid, known := fileOwner(fi)
		switch {
		case known && uid != os.Getuid():
			p.add("socket file", fail, start, fmt.Sprintf("%s is owned by uid %d, you are uid %d", res.Path, uid, os.Getuid()),
				"this socket belongs to another user's Herdr: run your own (set XDG_CONFIG_HOME or HERDR_SESSION), do not share sockets between users")
			return p.finish()
		case fi.Mode().Perm() != 0o600:
			p.add("socket file", warn, start, fmt.Sprintf("%s has mode %#o, Herdr makes it 0600", res.Path, fi.Mode().Perm()), "something changed the socket's mode; restart Herdr")
		default:
			p.add("socket file", pass, start, res.Path+": a socket, yours, mode 0600", "")
		}
	}

	start = time.Now()
	conn, derr := dialUnix(ctx, res.Path, p.timeout)
	if derr != nil {
		var ee *socket.EnvError
		if errors.As(socket.DiagnoseDial(res.Path, derr), &ee) {
			p.add("connect", fail, start, ee.Path+": "+ee.Cause, ee.Fix)
			return p.finish()
		}
		p.add("connect", fail, start, derr.Error(), transportFix(&socket.UnavailableError{Path: res.Path, Hint: "herdr", Err: derr}, res))
		return p.finish()
	}
	conn.Close()
	p.add("connect", pass, start, "connected", "")

	start = time.Now()
	var pong schema.ResultPong
	_, rtt, err := p.call(ctx, schema.MethodPing, schema.PingParams{}, &pong)
	if err != nil {
		p.add("ping", fail, start, err.Error(), transportFix(err, res))
		return p.finish()
	}
	if pong.Protocol < socket.MinProtocol {
		mm := &socket.ProtocolMismatchError{Server: pong.Protocol, Version: pong.Version, Min: socket.MinProtocol}
		p.add("ping", fail, start, mm.Error(), "protocol mismatch: "+strings.SplitN(mm.Error(), ": ", 2)[1])
		return p.finish()
	}
	p.add("ping", pass, start, fmt.Sprintf("Herdr %s, protocol %d (herdr-link accepts protocol %d and newer and checks the methods it needs, not the number); %.2f ms round trip",
		pong.Version, pong.Protocol, socket.MinProtocol, float64(rtt.Microseconds())/1000), "")
	if !p.methods(ctx, res) {
		return p.finish()
	}

	if !g.OK || g.PaneID == "" {
		p.add("self", skip, time.Now(), "no HERDR_PANE_ID", "")
		p.add("peers", skip, time.Now(), "no HERDR_PANE_ID", "")
		p.add("mcp surface", pass, time.Now(), "none: outside a Herdr pane, tools/list is empty", "")
		return p.finish()
	}
	start = time.Now()
	var agents struct {
		Agents []schema.AgentInfo `json:"agents"`
	}
	if _, _, err := p.call(ctx, schema.MethodAgentList, schema.EmptyParams{}, &agents); err != nil {
		p.add("self", fail, start, "agent.list: "+err.Error(), transportFix(err, res))
		return p.finish()
	}
	// agent.get on HERDR_PANE_ID answers when the pane hosts an agent under
	// that id; a moved pane's old id is a pane.* alias only, so fall back
	// to pane.get and find the agent by terminal.
	var self *schema.AgentInfo
	ws := ""
	var got schema.ResultAgentInfo
	_, _, gerr := p.call(ctx, schema.MethodAgentGet, schema.AgentTarget{Target: g.PaneID}, &got)
	movedNote := ""
	switch {
	case gerr == nil:
		self, ws = &got.Agent, got.Agent.WorkspaceID
	case !errors.Is(gerr, socket.ErrAgentNotFound):
		p.add("self", fail, start, "agent.get: "+gerr.Error(), transportFix(gerr, res))
		return p.finish()
	default:
		var pr schema.ResultPaneInfo
		if _, _, err := p.call(ctx, schema.MethodPaneGet, schema.PaneTarget{PaneID: g.PaneID}, &pr); err != nil {
			p.add("self", fail, start, fmt.Sprintf("pane %s: %v", g.PaneID, err), "Herdr does not know this pane: was it closed? Restart the agent in a Herdr pane")
			return p.finish()
		}
		ws = pr.Pane.WorkspaceID
		if pr.Pane.PaneID != g.PaneID {
			movedNote = fmt.Sprintf(" (pane moved: HERDR_PANE_ID %s is now %s)", g.PaneID, pr.Pane.PaneID)
		}
		for i := range agents.Agents {
			if agents.Agents[i].TerminalID == pr.Pane.TerminalID {
				self = &agents.Agents[i]
			}
		}
	}
	switch {
	case self == nil:
		p.add("self", fail, start, fmt.Sprintf("pane %s in workspace %s hosts no detected agent%s", g.PaneID, ws, movedNote),
			"occupant not detected yet: start a supported agent in this pane, or wait a moment for Herdr to detect it")
	case self.Name == nil:
		p.add("self", warn, start, fmt.Sprintf("a %s agent, unnamed, in workspace %s%s; the self bootstrap will name it hl-<8 hex> on first use", deref(self.Agent), ws, movedNote),
			fmt.Sprintf("unnamed occupant: let herdr-link name it, or name it yourself: `herdr agent rename %s <name>`", self.PaneID))
	default:
		p.add("self", pass, start, fmt.Sprintf("%q (%s, %s) in workspace %s%s; no bootstrap needed", *self.Name, deref(self.Agent), self.AgentStatus, ws, movedNote), "")
	}
	start = time.Now()
	var names []string
	unnamed, elsewhere := 0, 0
	for _, a := range agents.Agents {
		switch {
		case a.WorkspaceID != ws:
			elsewhere++
		case self != nil && a.TerminalID == self.TerminalID:
		case a.Name == nil || !link.ValidName(*a.Name):
			unnamed++
		default:
			names = append(names, fmt.Sprintf("%s (%s)", *a.Name, link.State(a.AgentStatus)))
		}
	}
	p.add("peers", pass, start, fmt.Sprintf("%d peer(s): %s; not listed: %d unnamed in this workspace, %d in other workspaces",
		len(names), strings.Join(names, ", "), unnamed, elsewhere), "")
	p.add("mcp surface", pass, time.Now(), "dormant: tools/list shows herdr_link until it is called, then herdr_link, herdr_link_peers, herdr_link_send, herdr_link_close", "")
	return p.finish()
}

// neededMethods are the methods herdr-link calls. The probe checks each
// exists without running it: a request with empty params is one Herdr
// cannot parse, so it answers invalid_request naming the missing field
// when it knows the method, or "unknown variant" when it does not.
var neededMethods = []string{schema.MethodAgentList, schema.MethodAgentGet, schema.MethodAgentPrompt, schema.MethodAgentRename,
	schema.MethodPaneGet, schema.MethodPaneClose}

// methods adds the "methods" check; false when a needed method is missing
// or the check could not run.
func (p *prober) methods(ctx context.Context, res socket.Resolution) bool {
	start := time.Now()
	var missing, verified []string
	for _, m := range neededMethods {
		params := any(struct{}{})
		if len(schema.RequiredParams(m)) == 0 {
			params = schema.EmptyParams{} // read-only: run it
		}
		_, _, err := p.call(ctx, m, params, nil)
		switch {
		case errors.Is(err, socket.ErrMethodUnsupported):
			missing = append(missing, m)
		case err == nil, errors.Is(err, socket.ErrInvalidRequest):
			verified = append(verified, m)
		default:
			p.add("methods", fail, start, m+": "+err.Error(), transportFix(err, res))
			return false
		}
	}
	if len(missing) > 0 {
		p.add("methods", fail, start, fmt.Sprintf("this Herdr lacks %s (verified: %s)", strings.Join(missing, ", "), strings.Join(verified, ", ")),
			"upgrade Herdr to 0.8.0 or later")
		return false
	}
	p.add("methods", pass, start, "verified: "+strings.Join(verified, ", ")+" (each known to this Herdr; nothing was changed)", "")
	return true
}

func dialUnix(ctx context.Context, path string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	return d.DialContext(ctx, "unix", path)
}

func deref(s *string) string {
	if s == nil {
		return "unknown"
	}
	return *s
}

func (p *prober) finish() bool {
	for _, c := range p.checks {
		if c.Status == fail {
			return false
		}
	}
	return true
}

func useColour(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(w)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (p *prober) print(w io.Writer) {
	colour := useColour(w)
	paint := map[string]string{pass: "\x1b[32m", warn: "\x1b[33m", fail: "\x1b[31m", skip: "\x1b[2m"}
	fmt.Fprintf(w, "herdr-link probe (herdr-link %s)\n", buildinfo.Version())
	for _, c := range p.checks {
		v := strings.ToUpper(c.Status)
		if colour {
			v = paint[c.Status] + v + "\x1b[0m"
		}
		fmt.Fprintf(w, "  %-4s  %-12s %8.2f ms  %s\n", v, c.Name, c.MS, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(w, "  %-4s  %-12s %8s     fix: %s\n", "", "", "", c.Fix)
		}
	}
}

func probe(args []string, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-link probe [flags] [-- COMMAND ARGS...]", "Checks this pane's Herdr socket step by step and says what to fix. With -mcp it runs the MCP handshake against herdr-link, or against the COMMAND after --.", stderr)
	asJSON := fs.Bool("json", false, "print a machine-readable report")
	timeout := fs.Duration("timeout", 2*time.Second, "deadline of each step")
	callMethod := fs.String("call", "", "send METHOD (with an optional PARAMS_JSON argument) and print the response")
	raw := fs.Bool("raw", false, "print the exact request and response lines")
	validate := fs.String("validate", "", "check each live response against the Herdr schema document in `FILE` (write one with: herdr api schema --json > FILE)")
	watch := fs.Bool("watch", false, "print agent status changes and pane events until interrupted")
	mcpCmd := fs.Bool("mcp", false, "run the MCP handshake against herdr-link (or the command given as arguments) and print it")
	record := fs.String("record", "", "make read-only calls and write their exact lines, ids and names replaced, to `FILE` (see herdr-sim verify)")
	if code, done := cliflag.Parse(fs, flagsFirst(fs, args), stdout); done {
		return code
	}
	p := &prober{getenv: os.Getenv, timeout: *timeout, raw: *raw, out: stdout}
	if *validate != "" {
		v, err := schemalite.Load(*validate)
		if err != nil {
			fmt.Fprintln(stderr, "herdr-link probe:", err)
			return 2
		}
		p.validate = v
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	switch {
	case *callMethod != "":
		return p.callOne(ctx, *callMethod, fs.Args(), stdout, stderr)
	case *watch:
		return p.watch(ctx, stdout, stderr)
	case *mcpCmd:
		return probeMCP(ctx, fs.Args(), *raw, stdout, stderr)
	case *record != "":
		return p.record(ctx, *record, stdout, stderr)
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

// callOne implements --call METHOD [PARAMS_JSON].
func (p *prober) callOne(ctx context.Context, method string, rest []string, stdout, stderr io.Writer) int {
	if len(rest) > 1 {
		fmt.Fprintln(stderr, "herdr-link probe: --call takes METHOD and at most one PARAMS_JSON argument")
		return 2
	}
	params := []byte("{}")
	if len(rest) == 1 {
		params = []byte(rest[0])
	}
	if err := checkParams(method, params); err != nil {
		fmt.Fprintln(stderr, "herdr-link probe:", err)
		return 2
	}
	res, err := socket.ResolvePath(p.getenv)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link probe:", err)
		return 1
	}
	p.client = &socket.Client{Path: res.Path, Timeout: p.timeout}
	line, rtt, err := p.call(ctx, method, jsonx.RawMessage(params), nil)
	if line != nil && !p.raw {
		pretty, perr := jsonx.MarshalIndent(jsonx.RawMessage(line))
		if perr != nil {
			pretty = line
		}
		fmt.Fprintln(stdout, string(pretty))
	}
	fmt.Fprintf(stderr, "%s: %.2f ms round trip\n", method, float64(rtt.Microseconds())/1000)
	for _, c := range p.checks {
		fmt.Fprintf(stderr, "%s:\n%s\n", c.Name, c.Detail)
	}
	if err != nil || len(p.checks) > 0 {
		if err != nil && line == nil {
			fmt.Fprintln(stderr, "herdr-link probe:", err, "—", transportFix(err, res))
		}
		return 1
	}
	return 0
}

// checkParams validates PARAMS_JSON against the generated params type of
// method before anything is sent.
func checkParams(method string, params []byte) error {
	proto, ok := schema.NewParams(method)
	if !ok {
		return fmt.Errorf("unknown method %q (the schema has %d methods, e.g. agent.list, pane.get)", method, len(schema.Methods))
	}
	var present map[string]jsonx.RawMessage
	if err := jsonx.Unmarshal(params, &present); err != nil {
		return fmt.Errorf("params must be a JSON object: %v", err)
	}
	for _, f := range schema.RequiredParams(method) {
		if _, ok := present[f]; !ok {
			return fmt.Errorf("%s needs params field %q", method, f)
		}
	}
	if err := jsonx.UnmarshalStrict(params, proto); err != nil {
		return fmt.Errorf("params do not fit %s's params type: %v", method, err)
	}
	return nil
}

// watch implements --watch.
func (p *prober) watch(ctx context.Context, stdout, stderr io.Writer) int {
	res, err := socket.ResolvePath(p.getenv)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link probe:", err)
		return 1
	}
	c := &socket.Client{Path: res.Path, Timeout: p.timeout, Protocol: socket.ProtocolLenient, Warn: func(m string) { fmt.Fprintln(stderr, m) }}
	agents, err := c.AgentList(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link probe:", err, "—", transportFix(err, res))
		return 1
	}
	subs := []schema.Subscription{
		{PaneCreated: &schema.SubscriptionPaneCreated{}}, {PaneClosed: &schema.SubscriptionPaneClosed{}},
		{PaneUpdated: &schema.SubscriptionPaneUpdated{}}, {PaneMoved: &schema.SubscriptionPaneMoved{}},
		{PaneExited: &schema.SubscriptionPaneExited{}}, {PaneAgentDetected: &schema.SubscriptionPaneAgentDetected{}},
	}
	for _, a := range agents {
		subs = append(subs, schema.Subscription{PaneAgentStatusChanged: &schema.SubscriptionPaneAgentStatusChanged{PaneID: a.PaneID}})
	}
	sub, err := c.Subscribe(ctx, schema.EventsSubscribeParams{Subscriptions: subs})
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link probe:", err, "—", transportFix(err, res))
		return 1
	}
	defer sub.Close()
	fmt.Fprintf(stderr, "watching %s: pane events and the status of %d agents (plain events replay Herdr's recent history first); Ctrl-C to stop\n", res.Path, len(agents))
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return 0
			}
			if errors.Is(err, socket.ErrMalformedResponse) {
				fmt.Fprintln(stderr, err)
				continue
			}
			fmt.Fprintln(stderr, "herdr-link probe: stream ended:", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s  %-26s %s\n", ev.Received.Format("15:04:05.000"), ev.Event, ev.Data)
	}
}

// probeMCP implements --mcp [COMMAND…].
func probeMCP(ctx context.Context, command []string, raw bool, stdout, stderr io.Writer) int {
	if len(command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintln(stderr, "herdr-link probe:", err)
			return 1
		}
		command = []string{exe, "serve"}
	}
	c, err := mcpclient.Start(command[0], command[1:], os.Environ())
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link probe:", err)
		return 1
	}
	defer c.Close()
	last := time.Now()
	c.Trace = func(dir string, line []byte) {
		now := time.Now()
		shown := string(line)
		if !raw && len(shown) > 200 {
			shown = shown[:200] + fmt.Sprintf("… (%d bytes; --raw shows all)", len(line))
		}
		fmt.Fprintf(stdout, "  %+8.2f ms %s %s\n", float64(now.Sub(last).Microseconds())/1000, dir, shown)
		last = now
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	step := func(name string, f func() error) bool {
		fmt.Fprintf(stdout, "%s\n", name)
		last = time.Now()
		start := time.Now()
		if err := f(); err != nil {
			fmt.Fprintf(stdout, "  FAIL %s: %v\n", name, err)
			return false
		}
		fmt.Fprintf(stdout, "  ok   %.2f ms\n", float64(time.Since(start).Microseconds())/1000)
		return true
	}
	var tools []string
	list := func() error {
		raw, err := c.Call(ctx, "tools/list", map[string]any{})
		if err != nil {
			return err
		}
		var r struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		tools = nil
		if err := jsonx.Unmarshal(raw, &r); err != nil {
			return err
		}
		for _, t := range r.Tools {
			tools = append(tools, t.Name)
		}
		return nil
	}
	ok := step("initialize", func() error { _, err := c.Initialize(ctx, "2025-06-18"); return err }) &&
		step("tools/list", list)
	if ok && len(tools) == 0 {
		fmt.Fprintln(stdout, "the server lists no tools: it is not in a Herdr pane (see `herdr-link probe`)")
		return 1
	}
	ok = ok && step("tools/call herdr_link {}", func() error {
		r, err := c.CallTool(ctx, "herdr_link", nil)
		if err == nil && r.IsError {
			err = errors.New(r.Text())
		}
		return err
	}) && step("notifications/tools/list_changed", func() error {
		for _, n := range c.Notifications() {
			if n.Method == "notifications/tools/list_changed" {
				return nil
			}
		}
		return errors.New("not received")
	}) && step("tools/list (active)", func() error {
		if err := list(); err != nil {
			return err
		}
		if len(tools) != 4 {
			return fmt.Errorf("tools %v", tools)
		}
		return nil
	}) && step("ping", func() error { _, err := c.Call(ctx, "ping", nil); return err })
	if !ok {
		return 1
	}
	return 0
}
