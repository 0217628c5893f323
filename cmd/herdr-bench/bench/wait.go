package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/internal/sibling"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// wait is 'herdr-bench wait': what requests and held messages cost while
// they wait, on embedded simulators, through herdr-link MCP servers
// (-delivery fast), each scenario one interleaved run:
//
//   - sends: request sends (the default) and expect_reply:false sends to
//     idle targets, each kind through its own server, interleaved: p50,
//     p90 and each server's CPU per send;
//   - counts: held sends (to a working target) and herdr_link_peers with
//     0, 100 and 1,000 held messages, and with as many pending requests,
//     in the store: one simulator and server per store, calls interleaved
//     across them;
//   - idle: the CPU of a server and of the simulator, idle, first with no
//     request pending, then holding N pending requests to T working
//     targets.
func wait(args []string, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-bench wait [flags]", "Measures what waiting costs on embedded simulators: request sends vs expect_reply:false, held sends and peers with 0/100/1000 held messages and pending requests, an idle server holding pending requests.", stderr)
	n := fs.Int("n", 200, "measured calls per series")
	only := fs.String("scenario", "sends,counts,idle", "scenarios: sends, counts, idle")
	counts := fs.String("counts", "0,100,1000", "store sizes of the counts scenario (held messages, and pending requests)")
	pending := fs.Int("pending", 300, "pending requests of the idle scenario")
	targets := fs.Int("targets", 30, "working targets of the idle scenario")
	cpuFor := fs.Duration("cpu-for", 20*time.Second, "window of each idle CPU measurement")
	linkBin := fs.String("link", "", "the herdr-link binary (default: herdr-link beside herdr-bench, then on PATH)")
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	exe, err := sibling.Find("herdr-link", "link", *linkBin)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-bench wait:", err)
		return 1
	}
	var sizes []int
	for _, s := range strings.Split(*counts, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 0 {
			fmt.Fprintf(stderr, "herdr-bench wait: -counts %q: want counts ≥ 0, comma-separated\n", *counts)
			return 2
		}
		sizes = append(sizes, v)
	}
	if *n < 1 || *pending < 0 || *targets < 1 {
		fmt.Fprintln(stderr, "herdr-bench wait: -n and -targets must be ≥ 1, -pending ≥ 0")
		return 2
	}
	fmt.Fprintf(stdout, "herdr-bench wait: herdr-link MCP servers, -delivery fast, embedded simulators (Enter 5 ms after the text)\n\n")
	for _, sc := range strings.Split(*only, ",") {
		switch sc {
		case "sends":
			err = waitSends(exe, *n, stdout)
		case "counts":
			err = waitCounts(exe, *n, sizes, stdout)
		case "idle":
			err = waitIdle(exe, *pending, *targets, *cpuFor, stdout)
		default:
			err = fmt.Errorf("unknown scenario %q (sends, counts, idle)", sc)
		}
		if err != nil {
			fmt.Fprintln(stderr, "herdr-bench wait:", err)
			return 1
		}
	}
	return 0
}

// waitServer is a herdr-link MCP server on a simulator, and the outbox
// of that simulator's socket as the server opens it.
type waitServer struct {
	srv   *sockettest.Server
	world *sockettest.World
	c     *mcpclient.Client
	cmd   *exec.Cmd
	store *outbox.Store
}

// startWait starts a simulator of w and a server on it for bench-self.
func startWait(exe string, w *sockettest.World) (*waitServer, error) {
	t := startSelf(w)
	srv := t.srv
	pl := &panelock.Locker{Scope: srv.Path()}
	dir, err := pl.DirPath()
	var st *outbox.Store
	if err == nil {
		st, err = outbox.Open(dir, pl.ScopeID())
	}
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("outbox: %w", err)
	}
	c, cmd, err := startFast(exe, t)
	if err != nil {
		srv.Close()
		return nil, err
	}
	return &waitServer{srv: srv, world: w, c: c, cmd: cmd, store: st}, nil
}

func (s *waitServer) close() {
	s.c.Close()
	s.srv.Close()
	// The store's directory is the simulator's (a socket path that is
	// not used again): nothing of it is kept.
	if s.store != nil {
		os.RemoveAll(s.store.Dir)
	}
}

// cpu is the server's CPU time so far.
func (s *waitServer) cpu() (time.Duration, error) { return procCPU(s.cmd.Process.Pid) }

// call calls tool with args and returns the result's id field (a send's
// message id) and the call's duration.
func (s *waitServer) call(tool string, args any) (string, string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	r, err := s.c.CallTool(ctx, tool, args)
	d := time.Since(start)
	if err == nil && r.IsError {
		err = errors.New(r.Text())
	}
	if err != nil {
		return "", "", d, fmt.Errorf("%s: %w", tool, err)
	}
	var out struct{ ID, Delivery string }
	_ = jsonx.Unmarshal(r.StructuredContent, &out)
	return out.ID, out.Delivery, d, nil
}

// waitSendArgs are a send's arguments with expect_reply.
type waitSendArgs struct {
	To          string `json:"to"`
	Message     string `json:"message"`
	When        string `json:"when,omitempty"`
	ExpectReply *bool  `json:"expect_reply,omitempty"`
}

// sendTargets is how many idle targets the sends go to, in turn.
const sendTargets = 32

// waitSends interleaves request sends and expect_reply:false sends to
// idle targets, each kind through its own server on one simulator.
// Long: the set-up of both servers, the interleaved rounds and the report
// are one measurement, read top to bottom.
func waitSends(exe string, n int, out io.Writer) error {
	// bench-self's turns are short too: the notices its requests end
	// with ("handled": no reply came) are typed into it as turns.
	w, err := sockettest.ParseWorld([]byte(strings.Replace(holdWorldJSON(sendTargets, 0),
		`"name":"bench-self","status":"idle"`, `"name":"bench-self","status":"idle","turn_ms":2,"submit_ms":1`, 1)))
	if err != nil {
		return err
	}
	req, err := startWait(exe, w)
	if err != nil {
		return err
	}
	defer req.close()
	// The second server is another process on the same simulator: it
	// shares the world and the outbox, as two agents' servers do.
	plain, err := startSecond(exe, req)
	if err != nil {
		return err
	}
	defer plain.c.Close()
	no := false
	kinds := []struct {
		name string
		s    *waitServer
		args func(to string) waitSendArgs
	}{
		{"request (default)", req, func(to string) waitSendArgs { return waitSendArgs{To: to, Message: benchMessage, When: "now"} }},
		{"expect_reply:false", plain, func(to string) waitSendArgs {
			return waitSendArgs{To: to, Message: benchMessage, When: "now", ExpectReply: &no}
		}},
	}
	// The kinds send to targets half the list apart: a target just sent
	// to keeps its delivery lock for -submit-hold (10 ms after Enter,
	// which comes 5 ms after the text), and half of sendTargets rounds
	// of two sends take longer than that, so neither kind waits for the
	// other's lock. (With an odd count one kind would come back to a
	// target sooner after the other than the other after it.)
	const warm = 20
	series := make([][]time.Duration, len(kinds))
	cpu0 := make([]time.Duration, len(kinds))
	for i := range (n + warm) * len(kinds) {
		k := i % len(kinds)
		if i == warm*len(kinds)+k {
			if cpu0[k], err = kinds[k].s.cpu(); err != nil {
				return err
			}
		}
		_, _, d, err := kinds[k].s.call("herdr_link_send", kinds[k].args(fmt.Sprintf("i%d", (i/len(kinds)+k*sendTargets/2)%sendTargets)))
		if err != nil {
			return fmt.Errorf("%s send: %w", kinds[k].name, err)
		}
		if i >= warm*len(kinds) {
			series[k] = append(series[k], d)
		}
	}
	fmt.Fprintf(out, "sends to %d idle targets in turn (when now), interleaved, each kind its own server:\n", sendTargets)
	var p50 [2]time.Duration
	var cpus [2]float64
	for k, kind := range kinds {
		c1, err := kind.s.cpu()
		if err != nil {
			return err
		}
		s := holdSummary(series[k])
		p50[k] = s.p50
		cpus[k] = float64((c1 - cpu0[k]).Microseconds()) / float64(s.n)
		fmt.Fprintf(out, "  %-20s n=%-4d p50 %6.2f ms  p90 %6.2f ms  p99 %6.2f ms  server CPU %6.0f µs/send\n",
			kind.name, s.n, holdMS(s.p50), holdMS(s.p90), holdMS(s.p99), cpus[k])
	}
	fmt.Fprintf(out, "  request ÷ expect_reply:false: p50 %.2f×, server CPU %.2f×\n",
		float64(p50[0])/float64(max(p50[1], 1)), cpus[0]/max(cpus[1], 1))
	// Each request then ends (handled: the target's turn ended without a
	// reply) and its notice is typed into the sender: its whole cost.
	left, err := drain(req.store, 60*time.Second)
	if err != nil {
		return err
	}
	cAll := make([]float64, len(kinds))
	for k, kind := range kinds {
		c1, err := kind.s.cpu()
		if err != nil {
			return err
		}
		cAll[k] = float64((c1 - cpu0[k]).Microseconds()) / float64(len(series[k]))
	}
	fmt.Fprintf(out, "  with the requests' ends and notices (%d still pending): server CPU %.0f vs %.0f µs/send (%.2f×)\n\n",
		left, cAll[0], cAll[1], cAll[0]/max(cAll[1], 1))
	return nil
}

// drain waits up to limit for st to hold no pending request and no held
// message, and returns how many pending requests are left.
func drain(st *outbox.Store, limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	for {
		ents, err := st.List()
		if err != nil {
			return 0, err
		}
		pending, held := 0, 0
		for _, e := range ents {
			switch {
			case e.Pending():
				pending++
			case e.Held():
				held++
			}
		}
		if pending+held == 0 || time.Now().After(deadline) {
			return pending, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startSecond starts another server for bench-self on s's simulator.
func startSecond(exe string, s *waitServer) (*waitServer, error) {
	a, _ := s.world.Agent("bench-self")
	t := &target{path: s.srv.Path(), pane: a.PaneID, srv: s.srv}
	c, cmd, err := startFast(exe, t)
	if err != nil {
		return nil, err
	}
	return &waitServer{srv: s.srv, world: s.world, c: c, cmd: cmd, store: nil}, nil
}
