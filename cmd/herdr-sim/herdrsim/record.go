package herdrsim

import (
	"context"
	"errors"
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
	"github.com/herdr-link/herdr-link/internal/ndjson"
	"github.com/herdr-link/herdr-link/internal/recording"
	"github.com/herdr-link/herdr-link/internal/schemalite"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// recordEvents is how long a recording listens to events.subscribe by
// default.
const recordEvents = 2 * time.Second

// recorder makes the read-only calls of a recording against a live
// Herdr (HERDR_SOCKET_PATH, else the default socket).
type recorder struct {
	getenv  func(string) string
	timeout time.Duration // deadline of each call
	events  time.Duration // how long the subscription listens
}

// record implements `herdr-sim record FILE`: read-only calls against the
// live Herdr, their exact lines scrubbed by recording.Redact and written
// to FILE, for `herdr-sim verify` and for bug reports.
func record(args []string, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-sim record [flags] FILE", "Makes read-only calls against the live Herdr (HERDR_SOCKET_PATH) and writes their exact lines, ids and names replaced, to FILE (mode 0600); replay it with 'herdr-sim verify FILE'.", stderr)
	timeout := fs.Duration("timeout", 2*time.Second, "deadline of each call")
	events := fs.Duration("events", recordEvents, "how long to listen to events.subscribe")
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		fmt.Fprintln(stderr, "usage: herdr-sim record [flags] FILE   (FILE: where to write the recording)")
		return 2
	}
	file := fs.Arg(0)
	if err := recording.CheckFile(file); err != nil {
		fmt.Fprintln(stderr, "herdr-sim record:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r := recorder{getenv: os.Getenv, timeout: *timeout, events: *events}
	ex, err := r.exchanges(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-sim record:", err)
		return 1
	}
	red, err := recording.Redact(ex)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-sim record:", err)
		return 1
	}
	comments := []string{
		fmt.Sprintf("recorded by herdr-sim %s record at %s", buildinfo.Version(), time.Now().UTC().Format(time.RFC3339)),
		"read-only calls; everything but Herdr's own vocabulary (kinds, statuses, tags, error codes, counters) is replaced by stand-ins",
		"replay against the simulator: herdr-sim verify FILE",
	}
	if h := recordedHerdr(red); h != "" {
		comments = append(comments, h)
	}
	if err := recording.WriteFile(file, comments, red); err != nil {
		fmt.Fprintln(stderr, "herdr-sim record:", err)
		return 1
	}
	n := 0
	for _, e := range red {
		n += 1 + len(e.Responses)
	}
	fmt.Fprintf(stdout, "recorded %d exchanges (%d lines) to %s (mode 0600); ids, names, paths, titles, messages and all other free text replaced\n", len(red), n, file)
	return 0
}

// validate implements `herdr-sim validate SCHEMA_FILE`: the recording's
// read-only calls against the live Herdr, each response checked against
// the schema document (herdr api schema --json > SCHEMA_FILE).
func validate(args []string, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-sim validate [flags] SCHEMA_FILE", "Makes read-only calls against the live Herdr (HERDR_SOCKET_PATH) and checks each response against a Herdr schema document (write one with: herdr api schema --json > FILE).", stderr)
	timeout := fs.Duration("timeout", 2*time.Second, "deadline of each call")
	events := fs.Duration("events", 500*time.Millisecond, "how long to listen to events.subscribe")
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		fmt.Fprintln(stderr, "usage: herdr-sim validate [flags] SCHEMA_FILE")
		return 2
	}
	v, err := schemalite.Load(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "herdr-sim validate:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r := recorder{getenv: os.Getenv, timeout: *timeout, events: *events}
	ex, err := r.exchanges(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-sim validate:", err)
		return 1
	}
	bad := 0
	for i, e := range ex {
		for _, line := range e.Responses {
			if verr := v.Line(line); verr != nil {
				bad++
				fmt.Fprintf(stdout, "FAIL exchange %d (%s): the response does not match the schema document:\n  %s\n", i+1, e.Method(),
					strings.ReplaceAll(verr.Error(), "\n", "\n  "))
			}
		}
	}
	if bad > 0 {
		fmt.Fprintf(stdout, "%d responses do not match the schema document (the server and the document are from different Herdr versions?)\n", bad)
		return 1
	}
	fmt.Fprintf(stdout, "every response of %d exchanges matches the schema document\n", len(ex))
	return 0
}

// recordedHerdr is the recording's comment naming the Herdr it was made
// against ("Herdr 0.9.1, protocol 22"), from its ping answer; "" when the
// recording has none. herdr-sim verify replays it against that release.
func recordedHerdr(ex []recording.Exchange) string {
	for _, e := range ex {
		if e.Method() != schema.MethodPing || len(e.Responses) == 0 {
			continue
		}
		var env struct {
			Result struct {
				Version  string `json:"version"`
				Protocol uint32 `json:"protocol"`
			} `json:"result"`
		}
		if jsonx.Unmarshal(e.Responses[0], &env) == nil && env.Result.Version != "" {
			return fmt.Sprintf("Herdr %s, protocol %d", env.Result.Version, env.Result.Protocol)
		}
	}
	return ""
}

// exchanges makes the recording's read-only calls against the live Herdr
// and keeps every line exactly as exchanged.
func (r recorder) exchanges(ctx context.Context) ([]recording.Exchange, error) {
	res, err := socket.ResolvePath(r.getenv)
	if err != nil {
		return nil, err
	}
	path := res.Path
	var ex []recording.Exchange
	send := func(id, method string, params any) ([]byte, error) {
		req, err := jsonx.Marshal(struct {
			ID     string `json:"id"`
			Method string `json:"method"`
			Params any    `json:"params"`
		}{id, method, params})
		if err != nil {
			return nil, err
		}
		lines, err := r.exchangeRaw(ctx, path, req, 0)
		ex = append(ex, recording.Exchange{Request: req, Responses: lines})
		if err != nil {
			return nil, err
		}
		if len(lines) == 0 {
			return nil, socket.ErrEmptyResponse
		}
		return lines[0], nil
	}
	if _, err := send("probe:ping", schema.MethodPing, schema.PingParams{}); err != nil {
		return nil, err
	}
	line, err := send("probe:agent.list", schema.MethodAgentList, schema.EmptyParams{})
	if err != nil {
		return nil, err
	}
	var list struct {
		Result schema.ResultAgentList `json:"result"`
	}
	_ = jsonx.Unmarshal(line, &list)
	// The pane to look at: this process's, else the first agent's.
	pane := r.getenv("HERDR_PANE_ID")
	if pane == "" && len(list.Result.Agents) > 0 {
		pane = list.Result.Agents[0].PaneID
	}
	for _, step := range []struct {
		id, method string
		params     any
	}{
		{"probe:agent.get", schema.MethodAgentGet, schema.AgentTarget{Target: pane}},
		{"probe:agent.get:missing", schema.MethodAgentGet, schema.AgentTarget{Target: "herdr-link-probe-no-such-agent"}},
		{"probe:pane.get", schema.MethodPaneGet, schema.PaneTarget{PaneID: pane}},
		{"probe:pane.get:missing", schema.MethodPaneGet, schema.PaneTarget{PaneID: "herdr-link-probe-no-such-pane"}},
		{"probe:pane.list", schema.MethodPaneList, schema.PaneListParams{}},
		{"probe:session.snapshot", schema.MethodSessionSnapshot, schema.EmptyParams{}},
	} {
		if _, err := send(step.id, step.method, step.params); err != nil && !errors.Is(err, socket.ErrEmptyResponse) {
			return nil, err
		}
	}
	// A request Herdr cannot parse (no params): the error shape, no effect.
	noParams := []byte(`{"id":"probe:no-params","method":"pane.list"}`)
	lines, err := r.exchangeRaw(ctx, path, noParams, 0)
	if err != nil {
		return nil, err
	}
	ex = append(ex, recording.Exchange{Request: noParams, Responses: lines})
	e, err := r.subscription(ctx, path, pane)
	if err != nil {
		return nil, err
	}
	return append(ex, e), nil
}

// subscription is a short events.subscribe: whatever happens in a moment.
func (r recorder) subscription(ctx context.Context, path, pane string) (recording.Exchange, error) {
	subs := []schema.Subscription{{PaneUpdated: &schema.SubscriptionPaneUpdated{}}, {PaneAgentDetected: &schema.SubscriptionPaneAgentDetected{}},
		{PaneClosed: &schema.SubscriptionPaneClosed{}}}
	if pane != "" {
		subs = append(subs, schema.Subscription{PaneAgentStatusChanged: &schema.SubscriptionPaneAgentStatusChanged{PaneID: pane}})
	}
	req, _ := jsonx.Marshal(struct {
		ID     string                       `json:"id"`
		Method string                       `json:"method"`
		Params schema.EventsSubscribeParams `json:"params"`
	}{"probe:events.subscribe", schema.MethodEventsSubscribe, schema.EventsSubscribeParams{Subscriptions: subs}})
	lines, err := r.exchangeRaw(ctx, path, req, r.events)
	return recording.Exchange{Request: req, Responses: lines}, err
}

// exchangeRaw sends one request line on a new connection and returns the
// lines the server writes: one, or for listen > 0 (a subscription) all of
// them until listen has passed. Each line is kept exactly as received.
func (r recorder) exchangeRaw(ctx context.Context, path string, req []byte, listen time.Duration) ([][]byte, error) {
	d := net.Dialer{Timeout: r.timeout}
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, &socket.UnavailableError{Path: path, Hint: "herdr", Err: err}
	}
	defer conn.Close()
	deadline := time.Now().Add(r.timeout)
	if listen > 0 {
		deadline = time.Now().Add(listen)
	}
	_ = conn.SetDeadline(deadline)
	if _, err := conn.Write(append(append([]byte(nil), req...), '\n')); err != nil {
		return nil, fmt.Errorf("%w: %v", socket.ErrConnection, err)
	}
	rd := ndjson.NewReader(conn, recording.MaxLine)
	var lines [][]byte
	for {
		line, err := rd.ReadLine()
		if err != nil {
			if len(lines) > 0 || listen > 0 || errors.Is(err, io.EOF) {
				return lines, nil // the server closed, or the listening time is over
			}
			return nil, fmt.Errorf("%w: %v", socket.ErrTimeout, err)
		}
		lines = append(lines, append([]byte(nil), line...))
		if listen == 0 {
			return lines, nil
		}
	}
}
