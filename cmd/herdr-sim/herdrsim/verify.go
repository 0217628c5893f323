package herdrsim

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonshape"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/ndjson"
	"github.com/herdr-link/herdr-link/internal/recording"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// verify implements `herdr-sim verify FILE`: it builds a world from the
// recording's session.snapshot, answers ping as the recorded server did,
// replays every recorded request against it and reports each structural
// difference between the recorded lines and the simulator's (missing and
// extra keys, key order, types, result tags and error codes). Recorded
// event lines are checked for Herdr's sorted keys and compared with the
// simulator's rendering of the same event about the same pane.
func verify(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var faults faultFlags
	fs.Var(&faults, "fault", "METHOD:KIND[=ARG], repeatable: make the replaying simulator answer METHOD differently (as serve -fault does), to show that verify catches a simulator that drifted")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: herdr-sim verify [-fault METHOD:KIND[=ARG]]… FILE   (a recording made by herdr-sim record FILE)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "herdr-sim verify:", err)
		return 2
	}
	ex, err := recording.Parse(f)
	f.Close()
	if err != nil {
		fmt.Fprintln(stderr, "herdr-sim verify:", err)
		return 2
	}
	srv, err := replayServer(ex)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-sim verify:", err)
		return 2
	}
	defer srv.Close()
	for _, spec := range faults {
		method, f, err := parseFault(spec)
		if err != nil {
			fmt.Fprintln(stderr, "herdr-sim verify:", err)
			return 2
		}
		srv.SetFault(method, f)
	}
	diffs, lines := 0, 0
	report := func(i int, method, what string) {
		diffs++
		fmt.Fprintf(stdout, "DIFF exchange %d (%s): %s\n", i+1, method, what)
	}
	for i, e := range ex {
		method := e.Method()
		lines += len(e.Responses)
		if method == schema.MethodEventsSubscribe {
			verifyEvents(srv, i, e, report, stdout)
			continue
		}
		got, err := roundTrip(srv.Path(), e.Request, 0)
		if err != nil {
			report(i, method, "the simulator did not answer: "+err.Error())
			continue
		}
		compareLines(i, method, e.Responses, got, report)
	}
	if diffs > 0 {
		fmt.Fprintf(stdout, "%d structural difference(s) in %d exchanges (%d recorded lines)\n", diffs, len(ex), lines)
		return 1
	}
	fmt.Fprintf(stdout, "no structural difference: %d exchanges, %d recorded lines\n", len(ex), lines)
	return 0
}

// replayServer starts a simulator mirroring the recording: the world of
// its session.snapshot, the version, protocol and capabilities of its
// pong.
func replayServer(ex []recording.Exchange) (*sockettest.Server, error) {
	var snap *schema.SessionSnapshot
	var pong struct {
		Version      string           `json:"version"`
		Protocol     uint32           `json:"protocol"`
		Capabilities jsonx.RawMessage `json:"capabilities"`
	}
	for _, e := range ex {
		if len(e.Responses) == 0 {
			continue
		}
		var env struct {
			Result jsonx.RawMessage `json:"result"`
		}
		if jsonx.Unmarshal(e.Responses[0], &env) != nil || env.Result == nil {
			continue
		}
		switch e.Method() {
		case schema.MethodPing:
			_ = jsonx.Unmarshal(env.Result, &pong)
		case schema.MethodSessionSnapshot:
			var r schema.ResultSessionSnapshot
			if err := jsonx.Unmarshal(env.Result, &r); err != nil {
				return nil, fmt.Errorf("the recorded session.snapshot: %w", err)
			}
			snap = &r.Snapshot
		}
	}
	if snap == nil {
		return nil, errors.New("the recording has no session.snapshot answer to build a world from (record it with herdr-sim record)")
	}
	w, err := sockettest.NewWorld(sockettest.SpecFromSnapshot(*snap))
	if err != nil {
		return nil, fmt.Errorf("a world from the recorded snapshot: %w", err)
	}
	srv := sockettest.NewUnstartedServer(w)
	srv.Tick = 20 * time.Millisecond
	if pong.Version != "" {
		// A release the simulator models replays with its behaviour
		// (a 0.9 recording against the 0.9 model); the pong stays the
		// recorded one.
		if _, err := sockettest.HerdrRelease(pong.Version); err == nil {
			_ = srv.UseHerdr(pong.Version)
		}
		srv.Version, srv.Protocol, srv.CapabilitiesJSON = pong.Version, pong.Protocol, pong.Capabilities
		if srv.CapabilitiesJSON == nil {
			srv.CapabilitiesJSON = jsonx.RawMessage("null")
		}
	}
	srv.Start()
	return srv, nil
}

func compareLines(i int, method string, want, got [][]byte, report func(int, string, string)) {
	for j := 0; j < len(want) || j < len(got); j++ {
		switch {
		case j >= len(got):
			report(i, method, fmt.Sprintf("line %d: the simulator wrote no such line", j+1))
		case j >= len(want):
			report(i, method, fmt.Sprintf("line %d: the simulator wrote a line the recording does not have", j+1))
		default:
			ds, err := jsonshape.Lines(want[j], got[j])
			if err != nil {
				report(i, method, fmt.Sprintf("line %d: %v", j+1, err))
				continue
			}
			for _, d := range ds {
				report(i, method, d.String())
			}
		}
	}
}

// verifyEvents compares a subscription's first line with the simulator's
// and checks each recorded event line.
func verifyEvents(srv *sockettest.Server, i int, e recording.Exchange, report func(int, string, string), stdout io.Writer) {
	method := schema.MethodEventsSubscribe
	got, err := roundTrip(srv.Path(), e.Request, 1)
	if err != nil {
		report(i, method, "the simulator did not answer: "+err.Error())
		return
	}
	if len(e.Responses) == 0 {
		compareLines(i, method, nil, got, report)
		return
	}
	compareLines(i, method, e.Responses[:1], got, report)
	for j, line := range e.Responses[1:] {
		n, err := jsonshape.Parse(line)
		if err != nil {
			report(i, method, fmt.Sprintf("event line %d: %v", j+1, err))
			continue
		}
		for _, d := range jsonshape.Sorted(n) {
			report(i, method, fmt.Sprintf("event line %d: %s", j+1, d))
		}
		kind := n.Str("event")
		data := n.Get("data")
		pane := data.Str("pane_id")
		if pane == "" {
			pane = data.Get("pane").Str("pane_id")
		}
		sim, err := srv.World.RenderEvent(kind, pane)
		if err != nil {
			fmt.Fprintf(stdout, "note: exchange %d event line %d (%s) checked for key order only: %v\n", i+1, j+1, kind, err)
			continue
		}
		ds, _ := jsonshape.Lines(line, sim)
		for _, d := range ds {
			if predatesDetection(d) {
				fmt.Fprintf(stdout, "note: exchange %d event line %d (%s): %s: the event predates the agent's detection (the simulator renders the pane as it is now)\n", i+1, j+1, kind, d.Path)
				continue
			}
			report(i, method, fmt.Sprintf("event line %d: %s", j+1, d))
		}
	}
}

// predatesDetection: Herdr 0.8.2 replays its retained events to a new
// subscription, and one about a pane written before Herdr detected (or
// finished launching) its agent has no agent key, where the simulator
// renders the pane from the recording's snapshot, agent included. Only
// that key's absence from the recorded event is let pass.
func predatesDetection(d jsonshape.Difference) bool {
	return d.What == "extra key" && (d.Path == "/data/pane/agent" || d.Path == "/data/agent")
}

// roundTrip sends one request line and reads what the simulator writes:
// everything until it closes the connection, or the first max lines.
func roundTrip(path string, req []byte, max int) ([][]byte, error) {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(append(append([]byte(nil), req...), '\n')); err != nil {
		return nil, err
	}
	rd := ndjson.NewReader(c, recording.MaxLine)
	var out [][]byte
	for max == 0 || len(out) < max {
		line, err := rd.ReadLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, append([]byte(nil), line...))
	}
	return out, nil
}
