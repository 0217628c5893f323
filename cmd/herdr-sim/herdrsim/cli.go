package herdrsim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

type cliRequest struct {
	id     string
	method string
	params any
}

// okRequestID is the id of herdr's send_ok_request verbs, which print
// nothing on success.
const okRequestID = "cli:request"

var errUsage = errors.New("usage")

func parseCLI(args []string) (cliRequest, error) {
	if len(args) < 2 {
		return cliRequest{}, errUsage
	}
	group, verb, rest := args[0], args[1], args[2:]
	id := "cli:" + group + ":" + verb
	if r, ok, err := parseInputCLI(group, verb, rest); ok {
		return r, err
	}
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
	var ue *usageError
	switch {
	case errors.As(err, &ue) && ue.failed:
		fmt.Fprintln(stderr, "Error: "+ue.msg)
		return 1
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, ue.msg)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "herdr-sim: invalid command: %s\n%s", strings.Join(args, " "), usage)
		return 2
	}
	// No client-side timeout, as the herdr CLI has none; waits are bounded
	// by the server.
	c := &socket.Client{Timeout: 24 * time.Hour}
	ctx := context.Background()
	// The protocol guard: a ping on its own connection, exact equality.
	var pong schema.ResultPong
	if _, _, err := c.CallRaw(ctx, "api-client:status", schema.MethodPing, schema.PingParams{}, &pong); err != nil {
		return transportFailure(stderr, req.id, err)
	}
	if cp := clientProtocol(); pong.Protocol != cp {
		msg := fmt.Sprintf("client protocol %d is newer than server protocol %d; restart the Herdr server before using this command. Stop the old server to use the new version.\nStopping exits pane processes.\nRun `herdr server stop`, then run `herdr` again.", cp, pong.Protocol)
		if pong.Protocol > cp {
			msg = fmt.Sprintf("client protocol %d is older than server protocol %d; upgrade the Herdr client before using this command", cp, pong.Protocol)
		}
		cliError(stderr, req.id, "protocol_mismatch", msg)
		return 1
	}
	_, resp, err := c.CallRaw(ctx, req.id, req.method, req.params, nil)
	var refusal *socket.Error
	switch {
	case errors.As(err, &refusal) && resp != nil:
		fmt.Fprintln(stderr, string(resp))
		return 1
	case err != nil:
		return transportFailure(stderr, req.id, err)
	}
	if req.id != okRequestID {
		fmt.Fprintln(stdout, string(resp))
	}
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
