package herdrlink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

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

// probeChecks run in order; each adds its findings and says whether the
// checks after it can run.
var probeChecks = []func(p *prober, ctx context.Context) bool{
	(*prober).checkEnvironment,
	(*prober).checkSocketFile,
	(*prober).checkConnect,
	(*prober).checkPing,
	func(p *prober, ctx context.Context) bool { return p.methods(ctx, p.gate.Socket) },
	(*prober).checkSelfAndPeers,
	(*prober).checkHeld,
}

// run performs the checks in order and returns whether all passed.
func (p *prober) run(ctx context.Context) bool {
	for _, check := range probeChecks {
		if !check(p, ctx) {
			break
		}
	}
	return p.finish()
}

// checkEnvironment: the gate's variables and the socket path they choose.
func (p *prober) checkEnvironment(context.Context) bool {
	g := link.CheckGate(p.getenv)
	p.gate = g
	start := time.Now()
	envDetail := fmt.Sprintf("HERDR_ENV=%q HERDR_PANE_ID=%q HERDR_SOCKET_PATH=%q HERDR_SESSION=%q; socket %s (chosen by %s)",
		p.getenv("HERDR_ENV"), p.getenv("HERDR_PANE_ID"), p.getenv("HERDR_SOCKET_PATH"), p.getenv("HERDR_SESSION"), g.Socket.Path, g.Socket.Rule)
	switch {
	case g.OK:
		p.add("environment", pass, start, envDetail, "")
	case g.Failed == link.FailedHerdrCore:
		// herdr-core's socket is not Herdr's: no socket check applies.
		p.add("environment", fail, start, g.Reason, link.HerdrCoreFix)
		return false
	default:
		p.add("environment", fail, start, envDetail+"; "+g.Reason,
			"not in a Herdr pane: start your agent from a pane Herdr manages (Herdr sets HERDR_ENV, HERDR_PANE_ID and HERDR_SOCKET_PATH)")
	}
	res := g.Socket
	if res.Path == "" {
		return false
	}
	p.client = p.newClient(res.Path, socket.ProtocolOff)
	return true
}

// checkSocketFile: the path is a socket, the caller's, mode 0600.
func (p *prober) checkSocketFile(context.Context) bool {
	res := p.gate.Socket
	start := time.Now()
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
		return false
	case err != nil:
		p.add("socket file", fail, start, fmt.Sprintf("%s: %v", res.Path, err), fmt.Sprintf("Herdr is not running: start it with `%s`", res.StartHint()))
		return false
	case fi.Mode()&os.ModeSocket == 0:
		p.add("socket file", fail, start, fmt.Sprintf("%s is a %v, not a socket", res.Path, fi.Mode().Type()), "remove the file and start Herdr again")
		return false
	default:
		uid, known := fileOwner(fi)
		switch {
		case known && uid != os.Getuid():
			p.add("socket file", fail, start, fmt.Sprintf("%s is owned by uid %d, you are uid %d", res.Path, uid, os.Getuid()),
				"this socket belongs to another user's Herdr: run your own (set XDG_CONFIG_HOME or HERDR_SESSION), do not share sockets between users")
			return false
		case fi.Mode().Perm() != 0o600:
			p.add("socket file", warn, start, fmt.Sprintf("%s has mode %#o, Herdr makes it 0600", res.Path, fi.Mode().Perm()), "something changed the socket's mode; restart Herdr")
		default:
			p.add("socket file", pass, start, res.Path+": a socket, yours, mode 0600", "")
		}
	}
	return true
}

// checkConnect: something accepts connections on the socket.
func (p *prober) checkConnect(ctx context.Context) bool {
	res := p.gate.Socket
	start := time.Now()
	conn, derr := dialUnix(ctx, res.Path, p.timeout)
	if derr != nil {
		var ee *socket.EnvError
		if errors.As(socket.DiagnoseDial(res.Path, derr), &ee) {
			p.add("connect", fail, start, ee.Path+": "+ee.Cause, ee.Fix)
			return false
		}
		p.add("connect", fail, start, derr.Error(), transportFix(&socket.UnavailableError{Path: res.Path, Hint: res.StartHint(), Err: derr}, res))
		return false
	}
	conn.Close()
	p.add("connect", pass, start, "connected", "")
	return true
}

// checkPing: Herdr answers ping with a protocol herdr-link talks.
func (p *prober) checkPing(ctx context.Context) bool {
	res := p.gate.Socket
	start := time.Now()
	var pong schema.ResultPong
	_, rtt, err := p.call(ctx, schema.MethodPing, schema.PingParams{}, &pong)
	if err != nil {
		p.add("ping", fail, start, err.Error(), transportFix(err, res))
		return false
	}
	if pong.Protocol < socket.MinProtocol {
		mm := &socket.ProtocolMismatchError{Server: pong.Protocol, Version: pong.Version, Min: socket.MinProtocol}
		p.add("ping", fail, start, mm.Error(), "protocol mismatch: "+strings.SplitN(mm.Error(), ": ", 2)[1])
		return false
	}
	p.add("ping", pass, start, fmt.Sprintf("Herdr %s, protocol %d (herdr-link accepts protocol %d and newer and checks the methods it needs, not the number); %.2f ms round trip",
		pong.Version, pong.Protocol, socket.MinProtocol, float64(rtt.Microseconds())/1000), "")
	return true
}

// checkSelfAndPeers: the server's own resolution of the caller and its
// peers, and the MCP surface it would show.
func (p *prober) checkSelfAndPeers(ctx context.Context) bool {
	g, res := p.gate, p.gate.Socket

	if !g.OK || g.PaneID == "" {
		p.add("self", skip, time.Now(), "no HERDR_PANE_ID", "")
		p.add("peers", skip, time.Now(), "no HERDR_PANE_ID", "")
		p.add("mcp surface", pass, time.Now(), "none: outside a Herdr pane, tools/list is empty", "")
		return false
	}
	// The server's own resolution (link.Diagnose), so the probe cannot
	// disagree with the server it diagnoses.
	start := time.Now()
	l, err := link.New(link.Config{Herdr: link.SocketHerdr{Client: p.client}, PaneID: g.PaneID, CallTimeout: p.timeout})
	if err != nil {
		p.add("self", fail, start, err.Error(), "pass a positive -timeout")
		return false
	}
	d, err := l.Diagnose(ctx)
	if err != nil {
		cause := err
		if u := errors.Unwrap(err); u != nil {
			cause = u
		}
		fix := transportFix(cause, res)
		if errors.Is(cause, socket.ErrPaneNotFound) {
			fix = "Herdr does not know this pane: was it closed? Restart the agent in a Herdr pane"
		}
		p.add("self", fail, start, cause.Error(), fix)
		return false
	}
	movedNote := ""
	if d.PaneID != g.PaneID {
		movedNote = fmt.Sprintf(" (pane moved: HERDR_PANE_ID %s is now %s)", g.PaneID, d.PaneID)
	}
	ws := d.WorkspaceID
	switch self := d.Self; {
	case self == nil:
		p.add("self", fail, start, fmt.Sprintf("pane %s in workspace %s hosts no detected agent%s", g.PaneID, ws, movedNote),
			"occupant not detected yet: start a supported agent in this pane, or wait a moment for Herdr to detect it")
	case self.Name != "" && !link.ValidName(self.Name):
		p.add("self", fail, start, fmt.Sprintf("a %s agent named %q in workspace %s%s: not a valid agent name, and herdr-link never renames a named agent, so it cannot send", orNone(self.Kind), self.Name, ws, movedNote),
			fmt.Sprintf("give it a valid name (a lowercase letter, then up to 31 lowercase letters, digits, _ or -): `herdr agent rename %s <name>`", self.PaneID))
	case !link.ValidName(self.Name):
		p.add("self", warn, start, fmt.Sprintf("a %s agent, unnamed, in workspace %s%s; the self bootstrap will name it hl-<8 hex> on first use", orNone(self.Kind), ws, movedNote),
			fmt.Sprintf("unnamed occupant: let herdr-link name it, or name it yourself: `herdr agent rename %s <name>`", self.PaneID))
	default:
		p.add("self", pass, start, fmt.Sprintf("%q (%s, %s) in workspace %s%s; no bootstrap needed", self.Name, orNone(self.Kind), self.Status, ws, movedNote), "")
	}
	start = time.Now()
	names := make([]string, 0, len(d.Peers))
	for _, a := range d.Peers {
		names = append(names, fmt.Sprintf("%s (%s)", a.Name, link.State(a.Status)))
	}
	list := "none"
	if len(names) > 0 {
		list = strings.Join(names, ", ")
	}
	p.add("peers", pass, start, fmt.Sprintf("%d peer(s): %s; not listed: %d unnamed in this workspace, %d in other workspaces",
		len(names), list, d.Unnamed, d.Elsewhere), "")
	p.add("mcp surface", pass, time.Now(), "dormant: tools/list shows herdr_link until it is called, then herdr_link, herdr_link_peers, herdr_link_start, herdr_link_send, herdr_link_wait, herdr_link_close", "")
	return true
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

// orNone names an agent kind Herdr did not report.
func orNone(kind string) string {
	if kind == "" {
		return "unknown"
	}
	return kind
}
