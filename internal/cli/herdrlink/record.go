package herdrlink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/herdr-link/herdr-link/internal/buildinfo"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/ndjson"
	"github.com/herdr-link/herdr-link/internal/recording"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// recordEvents is how long the recording listens to events.subscribe
// (tests shorten it).
const recordEvents = 2 * time.Second

// record implements --record FILE: read-only calls against the live
// Herdr, their exact lines scrubbed by recording.Redact and written to
// FILE, for `herdr-sim verify` and for bug reports.
func (p *prober) record(ctx context.Context, file string, stdout, stderr io.Writer) int {
	if err := recording.CheckFile(file); err != nil {
		fmt.Fprintln(stderr, "herdr-link probe --record:", err)
		return 1
	}
	res, err := socket.ResolvePath(p.getenv)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link probe:", err)
		return 1
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "herdr-link probe --record:", err, "—", transportFix(err, res))
		return 1
	}
	ex, err := p.recordExchanges(ctx, res.Path)
	if err != nil {
		return fail(err)
	}
	red, err := recording.Redact(ex)
	if err != nil {
		return fail(err)
	}
	comments := []string{
		fmt.Sprintf("recorded by herdr-link %s probe --record at %s", buildinfo.Version(), time.Now().UTC().Format(time.RFC3339)),
		"read-only calls; everything but Herdr's own vocabulary (kinds, statuses, tags, error codes, counters) is replaced by stand-ins",
		"replay against the simulator: herdr-sim verify FILE",
	}
	if h := recordedHerdr(red); h != "" {
		comments = append(comments, h)
	}
	if err := recording.WriteFile(file, comments, red); err != nil {
		fmt.Fprintln(stderr, "herdr-link probe --record:", err)
		return 1
	}
	n := 0
	for _, e := range red {
		n += 1 + len(e.Responses)
	}
	fmt.Fprintf(stdout, "recorded %d exchanges (%d lines) to %s (mode 0600); ids, names, paths, titles, messages and all other free text replaced\n", len(red), n, file)
	return 0
}

// recordExchanges makes the recording's read-only calls against the Herdr
// at path and keeps every line exactly as exchanged.
func (p *prober) recordExchanges(ctx context.Context, path string) ([]recording.Exchange, error) {
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
		lines, err := p.exchangeRaw(ctx, path, req, 0)
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
	pane := p.getenv("HERDR_PANE_ID")
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
	lines, err := p.exchangeRaw(ctx, path, noParams, 0)
	if err != nil {
		return nil, err
	}
	ex = append(ex, recording.Exchange{Request: noParams, Responses: lines})
	// A short subscription: whatever happens in a moment.
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
	lines, err = p.exchangeRaw(ctx, path, req, p.events)
	if err != nil {
		return nil, err
	}
	ex = append(ex, recording.Exchange{Request: req, Responses: lines})
	return ex, nil
}

// exchangeRaw sends one request line on a new connection and returns the
// lines the server writes: one, or for listen > 0 (a subscription) all of
// them until listen has passed. Each line is kept exactly as received.
func (p *prober) exchangeRaw(ctx context.Context, path string, req []byte, listen time.Duration) ([][]byte, error) {
	conn, err := dialUnix(ctx, path, p.timeout)
	if err != nil {
		return nil, &socket.UnavailableError{Path: path, Hint: "herdr", Err: err}
	}
	defer conn.Close()
	deadline := time.Now().Add(p.timeout)
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
