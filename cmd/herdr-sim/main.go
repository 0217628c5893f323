// Command herdr-sim is a faithful stand-in for Herdr 0.8.2's socket API
// (package socket/sockettest as a command), and a stand-in for the herdr
// CLI's agent and pane verbs, so tools that drive either can run without
// Herdr.
//
//	herdr-sim serve [--socket PATH] [--world FILE] [--poll-read] [--protocol N] [--fault METHOD:KIND[=ARG]]... [--command PANE=JSON-ARGV]...
//	herdr-sim agent list | get T | prompt T TEXT [--wait [--until S]... [--timeout MS]] | rename T NAME|--clear
//	herdr-sim pane list [--workspace W] | get ID | close ID | read ID [--lines N]
//	herdr-sim workspace list | tab list [--workspace W] | api snapshot
//	herdr-sim world
//	herdr-sim turns [--socket PATH] PANE_ID
//	herdr-sim verify FILE
//
// The CLI verbs behave like herdr's: a ping to check the protocol, then the
// request, each on its own connection to HERDR_SOCKET_PATH (or the default
// socket); the response JSON on stdout and exit 0; a server error as JSON on
// stderr and exit 1; usage errors exit 2.
package main

import (
	"context"
	"errors"
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

	"github.com/herdr-link/herdr-link/internal/buildinfo"
	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/schemalite"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/ptypane"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `herdr-sim: a simulated Herdr 0.8.2 socket, and the herdr CLI's verbs against it.

usage:
  herdr-sim serve [flags]           serve a simulated Herdr socket until SIGINT/SIGTERM
  herdr-sim world                   print the built-in world file
  herdr-sim turns PANE_ID           print what the agent in a pane of a running serve received
  herdr-sim verify FILE             replay a herdr-link probe --record recording; report structural differences
  herdr-sim agent list|get|prompt|rename ...   the herdr CLI's agent verbs
  herdr-sim pane list|get|close|read ...       the herdr CLI's pane verbs
  herdr-sim workspace list | tab list | api snapshot
  herdr-sim version                 print the version (also --version)
  herdr-sim help [serve|turns]      print this text, or a command's flags
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stdout, stderr)
	case "world":
		fmt.Fprintln(stdout, sockettest.DefaultWorldJSON)
		return 0
	case "turns":
		return turns(args[1:], stdout, stderr)
	case "verify":
		return verify(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[1] == "serve" {
			return serve([]string{"-h"}, stdout, stderr)
		}
		if len(args) > 1 && args[1] == "turns" {
			return turns([]string{"-h"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, "herdr-sim", buildinfo.Version())
		return 0
	}
	return cli(args, stdout, stderr)
}

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

func serve(args []string, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-sim serve [flags]", "Serves a simulated Herdr socket until SIGINT or SIGTERM and prints the HERDR_* lines a pane would have.", stderr)
	path := fs.String("socket", "", "socket path (default: a new temporary directory)")
	worldFile := fs.String("world", "", "world file (default: the built-in world; see 'herdr-sim world')")
	pollRead := fs.Bool("poll-read", false, "reproduce Herdr's 100 ms sleep when a request has not arrived at the first poll")
	protocol := fs.Uint("protocol", uint(schema.Protocol), "protocol number ping reports; 19–25 also set that release's version and capabilities")
	version := fs.String("herdr-version", "", "Herdr version ping reports (default: the protocol's, 0.8.2 for 20)")
	validate := fs.String("validate", "", "check every response against this Herdr schema document and report failures on stderr")
	var commands faultFlags
	fs.Var(&commands, "command", `PANE=JSON-ARGV, repeatable: run a program in PANE's terminal (a pseudo-terminal), e.g. 'w1:p2=["claude"]'; the world file's "command" field also sets its env, dir and size`)
	herdrOnly := fs.Bool("herdr-only", false, "answer the simulator-only methods (sim.turns, used by 'herdr-sim turns') as unknown methods, as real Herdr does")
	var faults faultFlags
	fs.Var(&faults, "fault", "METHOD:KIND[=ARG], repeatable; METHOD * for all; KIND latency=DUR, hang, drop, drop-mid, garbage, wrong-id, oversize=BYTES, error=CODE:MESSAGE")
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "herdr-sim serve: unexpected arguments %q\n", fs.Args())
		return 2
	}
	var w *sockettest.World
	var err error
	if *worldFile != "" {
		w, err = sockettest.LoadWorld(*worldFile)
	} else {
		w = sockettest.DefaultWorld()
	}
	if err != nil {
		fmt.Fprintln(stderr, "herdr-sim:", err)
		return 1
	}
	srv := sockettest.NewUnstartedServer(w)
	srv.Programs = ptypane.Start
	for _, c := range commands {
		pane, spec, err := parseCommand(c)
		if err != nil {
			fmt.Fprintln(stderr, "herdr-sim:", err)
			return 2
		}
		if err := w.SetCommand(pane, spec); err != nil {
			fmt.Fprintln(stderr, "herdr-sim:", err)
			return 2
		}
	}
	srv.PollRead = *pollRead
	srv.HerdrOnly = *herdrOnly
	srv.Protocol = uint32(*protocol)
	_ = srv.UseProtocol(srv.Protocol) // known protocols get their pong; others keep 0.8.2's
	if *version != "" {
		srv.Version = *version
	}
	srv.Logf = func(format string, a ...any) { fmt.Fprintf(stderr, "herdr-sim: "+format+"\n", a...) }
	if *validate != "" {
		v, err := schemalite.Load(*validate)
		if err != nil {
			fmt.Fprintln(stderr, "herdr-sim:", err)
			return 1
		}
		srv.Check = v.Line
	}
	for _, spec := range faults {
		m, f, err := parseFault(spec)
		if err != nil {
			fmt.Fprintln(stderr, "herdr-sim:", err)
			return 2
		}
		srv.SetFault(m, f)
	}
	if *path == "" {
		dir, err := os.MkdirTemp("", "herdr-sim")
		if err != nil {
			fmt.Fprintln(stderr, "herdr-sim:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		*path = filepath.Join(dir, "herdr.sock")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := srv.StartAt(*path); err != nil {
		fmt.Fprintln(stderr, "herdr-sim:", err)
		return 1
	}
	defer srv.Close()
	pane := firstNamedPane(w)
	fmt.Fprintf(stdout, "HERDR_ENV=1\nHERDR_SOCKET_PATH=%s\nHERDR_PANE_ID=%s\n", srv.Path(), pane)
	if f, ok := stdout.(*os.File); ok {
		_ = f.Sync()
	}
	fmt.Fprintf(stderr, "herdr-sim: Herdr %s (protocol %d) listening on %s; %d panes; Ctrl-C to stop\n", srv.Version, srv.Protocol, srv.Path(), len(w.PaneIDs()))
	<-ctx.Done()
	fmt.Fprintf(stderr, "herdr-sim: stopping after %d requests\n", len(srv.Requests()))
	return 0
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

type cliRequest struct {
	id     string
	method string
	params any
}

var errUsage = errors.New("usage")

func parseCLI(args []string) (cliRequest, error) {
	if len(args) < 2 {
		return cliRequest{}, errUsage
	}
	group, verb, rest := args[0], args[1], args[2:]
	id := "cli:" + group + ":" + verb
	switch group + " " + verb {
	case "agent list":
		if len(rest) != 0 {
			return cliRequest{}, errUsage
		}
		return cliRequest{id, schema.MethodAgentList, schema.EmptyParams{}}, nil
	case "agent get":
		if len(rest) != 1 {
			return cliRequest{}, errUsage
		}
		return cliRequest{id, schema.MethodAgentGet, schema.AgentTarget{Target: rest[0]}}, nil
	case "agent prompt":
		return parsePrompt(id, rest)
	case "agent rename":
		if len(rest) != 2 {
			return cliRequest{}, errUsage
		}
		p := schema.AgentRenameParams{Target: rest[0]}
		if rest[1] != "--clear" {
			p.Name = &rest[1]
		}
		return cliRequest{id, schema.MethodAgentRename, p}, nil
	case "pane list", "tab list":
		fs := flag.NewFlagSet(verb, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		ws := fs.String("workspace", "", "")
		if err := fs.Parse(rest); err != nil || fs.NArg() != 0 {
			return cliRequest{}, errUsage
		}
		var wp *string
		if *ws != "" {
			wp = ws
		}
		if group == "tab" {
			return cliRequest{id, schema.MethodTabList, schema.TabListParams{WorkspaceID: wp}}, nil
		}
		return cliRequest{id, schema.MethodPaneList, schema.PaneListParams{WorkspaceID: wp}}, nil
	case "pane read":
		fs := flag.NewFlagSet(verb, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		lines := fs.Uint("lines", 0, "")
		source := fs.String("source", string(schema.ReadSourceRecent), "")
		if err := fs.Parse(reorder(rest)); err != nil || fs.NArg() != 1 {
			return cliRequest{}, errUsage
		}
		p := schema.PaneReadParams{PaneID: fs.Arg(0), Source: schema.ReadSource(*source)}
		if *lines > 0 {
			n := uint32(*lines)
			p.Lines = &n
		}
		return cliRequest{id, schema.MethodPaneRead, p}, nil
	case "pane get", "pane close":
		if len(rest) != 1 {
			return cliRequest{}, errUsage
		}
		m := schema.MethodPaneGet
		if verb == "close" {
			m = schema.MethodPaneClose
		}
		return cliRequest{id, m, schema.PaneTarget{PaneID: rest[0]}}, nil
	case "workspace list":
		return cliRequest{id, schema.MethodWorkspaceList, schema.EmptyParams{}}, nil
	case "api snapshot":
		return cliRequest{id, schema.MethodSessionSnapshot, schema.EmptyParams{}}, nil
	}
	return cliRequest{}, errUsage
}

// reorder moves flags before positional arguments, as herdr's parser
// accepts them anywhere.
func reorder(args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "--") {
			flags = append(flags, args[i])
			if !strings.Contains(args[i], "=") && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, args[i])
	}
	return append(flags, pos...)
}

func parsePrompt(id string, rest []string) (cliRequest, error) {
	var pos []string
	var wait bool
	var until []schema.AgentStatus
	var timeout *uint64
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case "--wait":
			wait = true
		case "--until", "--timeout":
			if i+1 >= len(rest) {
				return cliRequest{}, errUsage
			}
			v := rest[i+1]
			i++
			if rest[i-1] == "--until" {
				switch schema.AgentStatus(v) {
				case schema.AgentStatusIdle, schema.AgentStatusWorking, schema.AgentStatusBlocked, schema.AgentStatusDone, schema.AgentStatusUnknown:
					until = append(until, schema.AgentStatus(v))
				default:
					return cliRequest{}, errUsage
				}
			} else {
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return cliRequest{}, errUsage
				}
				timeout = &n
			}
		default:
			pos = append(pos, rest[i])
		}
	}
	if len(pos) != 2 || (!wait && (until != nil || timeout != nil)) {
		return cliRequest{}, errUsage
	}
	p := schema.AgentPromptParams{Target: pos[0], Text: pos[1]}
	if wait {
		p.Wait = &schema.AgentPromptWaitOptions{Until: until, TimeoutMS: timeout}
	}
	return cliRequest{id, schema.MethodAgentPrompt, p}, nil
}

func cliError(w io.Writer, id, code, msg string) {
	b, _ := jsonx.Marshal(schema.ErrorResponse{ID: id, Error: schema.ErrorBody{Code: code, Message: msg}})
	fmt.Fprintln(w, string(b))
}

func cli(args []string, stdout, stderr io.Writer) int {
	req, err := parseCLI(args)
	if err != nil {
		fmt.Fprintf(stderr, "herdr-sim: invalid command: %s\n%s", strings.Join(args, " "), usage)
		return 2
	}
	// No client-side timeout, as the herdr CLI has none; waits are bounded
	// by the server.
	c := &socket.Client{Timeout: 24 * time.Hour}
	ctx := context.Background()
	// The protocol guard: a ping on its own connection, exact equality.
	pong, err := c.RoundTrip(ctx, []byte(`{"id":"api-client:status","method":"ping","params":{}}`))
	if err != nil {
		return transportFailure(stderr, req.id, err)
	}
	var pr struct {
		Result struct {
			Protocol uint32 `json:"protocol"`
		} `json:"result"`
	}
	if err := jsonx.Unmarshal(pong, &pr); err != nil {
		fmt.Fprintf(stderr, "Error: invalid ping response: %v\n", err)
		return 1
	}
	if pr.Result.Protocol != schema.Protocol {
		msg := fmt.Sprintf("client protocol %d is newer than server protocol %d; restart the Herdr server before using this command. Stop the old server to use the new version.\nStopping exits pane processes.\nRun `herdr server stop`, then run `herdr` again.", schema.Protocol, pr.Result.Protocol)
		if pr.Result.Protocol > schema.Protocol {
			msg = fmt.Sprintf("client protocol %d is older than server protocol %d; upgrade the Herdr client before using this command", schema.Protocol, pr.Result.Protocol)
		}
		cliError(stderr, req.id, "protocol_mismatch", msg)
		return 1
	}
	line, err := jsonx.Marshal(struct {
		ID     string `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params"`
	}{req.id, req.method, req.params})
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	resp, err := c.RoundTrip(ctx, line)
	if err != nil {
		return transportFailure(stderr, req.id, err)
	}
	var env struct {
		Error *schema.ErrorBody `json:"error"`
	}
	if err := jsonx.Unmarshal(resp, &env); err != nil {
		fmt.Fprintf(stderr, "Error: invalid api response: %v\n", err)
		return 1
	}
	if env.Error != nil {
		fmt.Fprintln(stderr, string(resp))
		return 1
	}
	fmt.Fprintln(stdout, string(resp))
	return 0
}

func transportFailure(stderr io.Writer, id string, err error) int {
	var ue *socket.UnavailableError
	if errors.As(err, &ue) {
		cliError(stderr, id, "server_not_running", ue.Error())
		return 1
	}
	fmt.Fprintf(stderr, "Error: %v\n", err)
	return 1
}

// turns prints the submissions of a pane of a running herdr-sim serve, one
// JSON line {"at":RFC3339Nano,"text":…} each, oldest first, through the
// simulator-only method sim.turns.
func turns(args []string, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-sim turns [--socket PATH] PANE_ID",
		"Prints what the agent in PANE_ID of a running 'herdr-sim serve' received: one JSON line\n"+
			`{"at":"<RFC 3339 time>","text":"<the exact text of the turn>"} per user turn, oldest first.`+"\n"+
			"The socket is --socket, else HERDR_SOCKET_PATH (or the default socket), as for the other verbs.", stderr)
	path := fs.String("socket", "", "socket of the running herdr-sim serve")
	if code, done := cliflag.Parse(fs, reorder(args), stdout); done {
		return code
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		fmt.Fprintln(stderr, "herdr-sim turns: want exactly one PANE_ID")
		fs.Usage()
		return 2
	}
	line, err := jsonx.Marshal(struct {
		ID     string `json:"id"`
		Method string `json:"method"`
		Params struct {
			PaneID string `json:"pane_id"`
		} `json:"params"`
	}{ID: "cli:turns", Method: sockettest.SimMethodTurns, Params: struct {
		PaneID string `json:"pane_id"`
	}{fs.Arg(0)}})
	if err != nil {
		fmt.Fprintln(stderr, "herdr-sim turns:", err)
		return 1
	}
	c := &socket.Client{Path: *path, Timeout: 10 * time.Second}
	resp, err := c.RoundTrip(context.Background(), line)
	if err != nil {
		return transportFailure(stderr, "cli:turns", err)
	}
	var env struct {
		Result *sockettest.SimTurnsResult `json:"result"`
		Error  *schema.ErrorBody          `json:"error"`
	}
	if err := jsonx.Unmarshal(resp, &env); err != nil {
		fmt.Fprintf(stderr, "herdr-sim turns: invalid response: %v\n", err)
		return 1
	}
	switch {
	case env.Error != nil && env.Error.Code == "invalid_request":
		fmt.Fprintf(stderr, "herdr-sim turns: the server does not know %s: it is not a herdr-sim serve (or runs with --herdr-only)\n", sockettest.SimMethodTurns)
		return 1
	case env.Error != nil:
		fmt.Fprintln(stderr, string(resp))
		return 1
	case env.Result == nil || env.Result.Type != "sim_turns":
		fmt.Fprintf(stderr, "herdr-sim turns: unexpected response %s\n", resp)
		return 1
	}
	for _, t := range env.Result.Turns {
		b, err := jsonx.Marshal(t)
		if err != nil {
			fmt.Fprintln(stderr, "herdr-sim turns:", err)
			return 1
		}
		fmt.Fprintln(stdout, string(b))
	}
	return 0
}
