package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/internal/sibling"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// hold is 'herdr-bench hold': what waiting for a target's turn costs, on
// an embedded simulator, through a herdr-link MCP server (-delivery fast,
// so that the figures are the send's own, not the confirmation watch's):
//
//   - sends to idle targets with when "idle" and with when "now",
//     interleaved in one run: the idle check's cost is the difference;
//   - ten back-to-back sends to one working target, for each of several
//     targets: each is held, and returns without waiting for the
//     previous one's delivery;
//   - the CPU time of a server holding one message for each of ten
//     working targets, over a window (Linux: /proc/<pid>/stat).
func hold(args []string, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-bench hold [flags]", "Measures held delivery on an embedded simulator: when idle vs when now, back-to-back sends to a working target, the CPU of a server holding messages.", stderr)
	n := fs.Int("n", 200, "sends per series of the idle-vs-now comparison")
	rounds := fs.Int("rounds", 20, "working targets that each get ten back-to-back sends")
	cpuFor := fs.Duration("cpu-for", 30*time.Second, "how long to measure the CPU of a server holding 10 messages for 10 working targets (0: skip)")
	linkBin := fs.String("link", "", "the herdr-link binary (default: herdr-link beside herdr-bench, then on PATH)")
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	exe, err := sibling.Find("herdr-link", "link", *linkBin)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-bench hold:", err)
		return 1
	}
	if err := runHold(exe, *n, *rounds, *cpuFor, stdout); err != nil {
		fmt.Fprintln(stderr, "herdr-bench hold:", err)
		return 1
	}
	return 0
}

// holdIdle is the number of idle targets the comparison sends to in turn
// (each has long finished its previous turn when its next send comes; an
// odd number, so that each gets both kinds of send).
const holdIdle = 19

// holdWorld has the sender, idle targets i0… whose turns are short, and
// working targets w0… whose turns never end by themselves.
func holdWorld(idle, working int) (*sockettest.World, error) {
	return sockettest.ParseWorld([]byte(holdWorldJSON(idle, working)))
}

// holdWorldJSON is the spec of holdWorld.
func holdWorldJSON(idle, working int) string {
	panes := []string{`{"agent":{"kind":"claude","name":"bench-self","status":"idle"}}`}
	for i := range idle {
		panes = append(panes, fmt.Sprintf(`{"agent":{"kind":"claude","name":"i%d","status":"idle","turn_ms":2,"submit_ms":1}}`, i))
	}
	for i := range working {
		panes = append(panes, fmt.Sprintf(`{"agent":{"kind":"claude","name":"w%d","status":"working"}}`, i))
	}
	return `{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[` + strings.Join(panes, ",") + `]}]}]}`
}

// holdServer is a simulator and one herdr-link MCP server on it.
type holdServer struct {
	srv *sockettest.Server
	c   *mcpclient.Client
	cmd *exec.Cmd
}

func startHold(exe string, idle, working int, flags ...string) (*holdServer, error) {
	w, err := holdWorld(idle, working)
	if err != nil {
		return nil, err
	}
	t := startSelf(w)
	srv := t.srv
	c, cmd, err := startFast(exe, t, flags...)
	if err != nil {
		srv.Close()
		return nil, err
	}
	return &holdServer{srv: srv, c: c, cmd: cmd}, nil
}

// startSelf starts a simulator of w (submissions seen after 5 ms) and
// returns its target for the agent bench-self.
func startSelf(w *sockettest.World) *target {
	srv := sockettest.NewUnstartedServer(w)
	srv.SubmitDelay = 5 * time.Millisecond
	srv.Start()
	a, _ := w.Agent("bench-self")
	return &target{path: srv.Path(), pane: a.PaneID, srv: srv}
}

// startFast starts a herdr-link server (-delivery fast, the bench's
// -submit-hold, then flags) for t, initialized and through its
// herdr_link start within 10 s; on an error nothing of it is left.
func startFast(exe string, t *target, flags ...string) (*mcpclient.Client, *exec.Cmd, error) {
	cmd := exec.Command(exe, append([]string{"serve", "-no-bootstrap", "-log-level", "error", "-delivery", "fast", "-submit-hold", benchSubmitHold.String()}, flags...)...)
	cmd.Env = t.env()
	c, err := mcpclient.StartCmd(cmd)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err = c.Initialize(ctx, "2025-06-18"); err == nil {
		_, err = c.CallTool(ctx, "herdr_link", nil)
	}
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, cmd, nil
}

func (h *holdServer) close() {
	h.c.Close()
	h.srv.Close()
}

// send sends one message and returns its delivery value and duration.
func (h *holdServer) send(to, when string) (string, time.Duration, error) {
	args := map[string]any{"to": to, "message": benchMessage}
	if when != "" {
		args["when"] = when
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	r, err := h.c.CallTool(ctx, "herdr_link_send", args)
	d := time.Since(start)
	if err != nil {
		return "", d, err
	}
	if r.IsError {
		return "", d, errors.New(r.Text())
	}
	var out struct{ Delivery string }
	_ = jsonx.Unmarshal(r.StructuredContent, &out)
	return out.Delivery, d, nil
}

func runHold(exe string, n, rounds int, cpuFor time.Duration, out io.Writer) error {
	h, err := startHold(exe, holdIdle, rounds)
	if err != nil {
		return err
	}
	defer h.close()
	fmt.Fprintf(out, "herdr-bench hold: herdr-link MCP server, -delivery fast, embedded simulator (Enter 5 ms after the text, targets submit 1 ms after it)\n\n")
	if err := holdIdleVsNow(h, n, out); err != nil {
		return err
	}
	if err := holdBackToBack(h, rounds, out); err != nil {
		return err
	}
	if err := holdSettle(exe, rounds, out); err != nil {
		return err
	}
	if cpuFor > 0 {
		return holdCPU(exe, cpuFor, out)
	}
	return nil
}

// holdIdleVsNow interleaves when-idle and when-now sends to idle targets.
func holdIdleVsNow(h *holdServer, n int, out io.Writer) error {
	series := map[string][]time.Duration{}
	held := 0
	for i := range 2 * (n + 10) {
		when := []string{"idle", "now"}[i%2]
		to := fmt.Sprintf("i%d", i%holdIdle)
		d, el, err := h.send(to, when)
		if err != nil {
			return fmt.Errorf("send when %s to an idle target: %w", when, err)
		}
		if d == "held" {
			held++ // its target was still busy: not a send to an idle target
			continue
		}
		if i >= 20 { // warm-up
			series[when] = append(series[when], el)
		}
	}
	idle, now := holdSummary(series["idle"]), holdSummary(series["now"])
	fmt.Fprintf(out, "send to an idle target, when now    n=%-4d p50 %7.2f ms  p90 %7.2f ms  p99 %7.2f ms\n", now.n, holdMS(now.p50), holdMS(now.p90), holdMS(now.p99))
	fmt.Fprintf(out, "send to an idle target, when idle   n=%-4d p50 %7.2f ms  p90 %7.2f ms  p99 %7.2f ms  (p50 %+.2f ms vs now; %d found busy and held, left out)\n\n",
		idle.n, holdMS(idle.p50), holdMS(idle.p90), holdMS(idle.p99), holdMS(idle.p50-now.p50), held)
	return nil
}

// holdBackToBack sends ten messages in a row to each working target.
func holdBackToBack(h *holdServer, rounds int, out io.Writer) error {
	var ds []time.Duration
	for r := range rounds {
		for range 10 {
			d, el, err := h.send(fmt.Sprintf("w%d", r), "")
			if err != nil {
				return fmt.Errorf("send to a working target: %w", err)
			}
			if d != "held" {
				return fmt.Errorf("send to a working target: delivery %q, want held", d)
			}
			ds = append(ds, el)
		}
	}
	s := holdSummary(ds)
	fmt.Fprintf(out, "10 back-to-back sends to a working target × %d targets: all held, n=%d p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  max %.2f ms\n\n",
		rounds, s.n, holdMS(s.p50), holdMS(s.p90), holdMS(s.p99), holdMS(s.max))
	return nil
}

// holdCPU measures a fresh server holding one message for each of ten
// working targets.
func holdCPU(exe string, window time.Duration, out io.Writer) error {
	h, err := startHold(exe, 0, 10)
	if err != nil {
		return err
	}
	defer h.close()
	for i := range 10 {
		d, _, err := h.send(fmt.Sprintf("w%d", i), "")
		if err != nil || d != "held" {
			return fmt.Errorf("hold for w%d: %q %v", i, d, err)
		}
	}
	time.Sleep(time.Second) // the courier's first scan and probes
	pid := h.cmd.Process.Pid
	before, err := procCPU(pid)
	if err != nil {
		fmt.Fprintf(out, "server holding 10 messages for 10 working targets: CPU not measured (%v)\n", err)
		return nil
	}
	time.Sleep(window)
	after, err := procCPU(pid)
	if err != nil {
		return err
	}
	used := after - before
	fmt.Fprintf(out, "server holding 10 messages for 10 working targets: %v CPU (user+system) in %v = %.3f %% of one core\n",
		used, window, 100*used.Seconds()/window.Seconds())
	return nil
}

type summary struct {
	n                  int
	p50, p90, p99, max time.Duration
}

func holdSummary(ds []time.Duration) summary {
	if len(ds) == 0 {
		return summary{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return summary{n: len(s), p50: percentile(s, 50), p90: percentile(s, 90), p99: percentile(s, 99), max: s[len(s)-1]}
}

func holdMS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// holdSettle measures what settling costs a held delivery: the time from
// a working target's turn end to the held message typed, with the
// default settle gap and with one reading trusted (-settle-gap 0, as
// before herdr-link settled), rounds each, interleaved in one run.
func holdSettle(exe string, rounds int, out io.Writer) error {
	on, err := startHold(exe, 0, rounds)
	if err != nil {
		return err
	}
	defer on.close()
	off, err := startHold(exe, 0, rounds, "-settle-gap", "0")
	if err != nil {
		return err
	}
	defer off.close()
	var dOn, dOff []time.Duration
	for r := range rounds {
		for _, c := range []struct {
			h  *holdServer
			ds *[]time.Duration
		}{{on, &dOn}, {off, &dOff}} {
			d, err := c.h.heldDelivery(fmt.Sprintf("w%d", r))
			if err != nil {
				return err
			}
			*c.ds = append(*c.ds, d)
		}
	}
	a, b := holdSummary(dOn), holdSummary(dOff)
	fmt.Fprintf(out, "held delivery, turn end → typed, settled (two readings %v apart)  n=%-3d p50 %7.2f ms  p90 %7.2f ms\n", link.DefaultSettleGap, a.n, holdMS(a.p50), holdMS(a.p90))
	fmt.Fprintf(out, "held delivery, turn end → typed, one reading trusted             n=%-3d p50 %7.2f ms  p90 %7.2f ms  (settling: p50 %+.2f ms)\n\n", b.n, holdMS(b.p50), holdMS(b.p90), holdMS(a.p50-b.p50))
	return nil
}

// heldDelivery holds a message for the working target to, ends the
// target's turn, and returns how long until the message was typed.
func (h *holdServer) heldDelivery(to string) (time.Duration, error) {
	d, _, err := h.send(to, "")
	if err != nil || d != "held" {
		return 0, fmt.Errorf("hold for %s: %q %v", to, d, err)
	}
	a, _ := h.srv.World.Agent(to)
	time.Sleep(200 * time.Millisecond) // the courier follows the target
	start := time.Now()
	if err := h.srv.World.SetStatus(a.PaneID, "idle"); err != nil {
		return 0, err
	}
	for deadline := start.Add(30 * time.Second); len(h.srv.World.Prompts(a.PaneID)) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("held message for %s not typed within 30 s of its turn's end", to)
		}
	}
	return time.Since(start), nil
}
