package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/internal/ndjson"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
)

// The floor is what the machine allows for a stdio server in front of
// Herdr's socket: the bench → a relay process (`herdr-bench relay`,
// blocking system calls, no JSON) → the same simulator. It runs
// interleaved with the other routes, in shuffled order each round, so
// MCP's latency can be read as a ratio to it.

// proc is a route's server process, whose CPU time is read from its
// rusage when it exits.
type proc struct {
	cmd   *exec.Cmd
	calls atomic.Int64 // calls made after start-up
}

// cpu is the process's user plus system time; valid after it exited.
func (p *proc) cpu() time.Duration {
	if p == nil || p.cmd.ProcessState == nil {
		return 0
	}
	return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
}

func floorRequest(op string, seq int64, to string) []byte {
	list := fmt.Appendf(nil, `{"id":"floor:%d","method":%q,"params":{}}`, seq, schema.MethodAgentList)
	if op == "peers" {
		return list
	}
	text, _ := link.Wrap(link.Envelope{Protocol: link.Protocol, ID: link.NewMessageID(time.Now()), From: "bench-self", To: to, Message: benchMessage})
	prompt, _ := jsonx.Marshal(struct {
		ID     string                   `json:"id"`
		Method string                   `json:"method"`
		Params schema.AgentPromptParams `json:"params"`
	}{fmt.Sprintf("floor:%d:p", seq), schema.MethodAgentPrompt, schema.AgentPromptParams{Target: to, Text: text}})
	return append(append(list, '\t'), prompt...)
}

// floorRoute starts a relay. Its client side is built like mcpclient's (a
// locked writer, a reader goroutine handing each line to the waiting
// call), so both routes pay the same in the bench process.
func floorRoute(t *target) (*route, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "relay", "-socket", t.path)
	cmd.Env = t.env()
	cmd.Stderr = os.Stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd}
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		rd := ndjson.NewReader(r, 64<<20)
		for {
			l, err := rd.ReadLine()
			if err != nil {
				return
			}
			lines <- append([]byte(nil), l...)
		}
	}()
	var mu sync.Mutex // the relay answers one line at a time
	var seq int64
	next := t.rotation()
	run := func(ctx context.Context, op string) error {
		mu.Lock()
		defer mu.Unlock()
		seq++
		p.calls.Add(1)
		to := ""
		if op != opPeers {
			to = next()
		}
		if _, err := w.Write(append(floorRequest(op, seq, to), '\n')); err != nil {
			return err
		}
		select {
		case l, ok := <-lines:
			if !ok {
				return errors.New("the relay exited")
			}
			for _, part := range bytes.Split(l, []byte{'\t'}) {
				if !bytes.Contains(part, []byte(`"result"`)) {
					return fmt.Errorf("relay answer: %s", part)
				}
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// The floor has no confirmation watch: it is the two socket calls of
	// a send, not a delivery mode.
	return &route{name: "floor", run: run, proc: p, skip: map[string]bool{opSendConfirm: true}, close: func() {
		w.Close()
		for range lines {
		}
		_ = cmd.Wait()
	}}, nil
}

// mcpExe is the herdr-link binary of MCP route name: this one for "mcp",
// an -mcp-alt binary for "mcp:label".
func (t *target) mcpExe(name string) string {
	if label, ok := strings.CutPrefix(name, "mcp:"); ok {
		return t.alt[label]
	}
	return t.link
}

// startMCP starts the herdr-link server exe in delivery mode, initialized
// and activated.
func startMCP(t *target, exe, mode string) (*mcpclient.Client, *proc, error) {
	args := []string{"serve", "-no-bootstrap", "-log-level", "error", "-delivery", mode}
	if t.srv != nil {
		args = append(args, "-submit-hold", benchSubmitHold.String())
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = t.env()
	c, err := mcpclient.StartCmd(cmd)
	if err != nil {
		return nil, nil, err
	}
	ctx := context.Background()
	if _, err := c.Initialize(ctx, "2025-06-18"); err != nil {
		c.Close()
		return nil, nil, err
	}
	if _, err := c.CallTool(ctx, "herdr_link", nil); err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, &proc{cmd: cmd}, nil
}

// startupCPU is the median CPU time of a route's process that is started,
// set up as for measuring, and ended: what a process costs besides its
// calls.
func startupCPU(t *target, name string, n int) (time.Duration, error) {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		var r *route
		var err error
		switch {
		case name == "mcp" || strings.HasPrefix(name, "mcp:"):
			r, err = mcpRoute(t, name, opPeers)
		case name == "floor":
			r, err = floorRoute(t)
		default:
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		r.close()
		ds = append(ds, r.proc.cpu())
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], nil
}

// shuffled returns the routes in a fresh random order: a fixed order
// biases whichever route follows one whose processes just exited.
func shuffled(rng *rand.Rand, routes []*route) []*route {
	out := append([]*route(nil), routes...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// openRoutes starts the routes for op. Routes with a server process get a
// fresh one per op, so its rusage at exit is that op's.
func openRoutes(t *target, names []string, op string) ([]*route, error) {
	t.rotations, t.slots = 0, len(names)
	var routes []*route
	for _, name := range names {
		var r *route
		var err error
		switch name {
		case "socket":
			r = socketRoute(t)
		case "cli":
			r, err = cliRoute(t)
		case "floor":
			r, err = floorRoute(t)
		default:
			if name == "mcp" || strings.HasPrefix(name, "mcp:") {
				r, err = mcpRoute(t, name, op)
			} else {
				err = fmt.Errorf("unknown route %q", name)
			}
		}
		if err != nil {
			closeRoutes(routes)
			return nil, err
		}
		routes = append(routes, r)
	}
	return routes, nil
}

func closeRoutes(routes []*route) {
	for _, r := range routes {
		r.close()
	}
}

// cpuPerCall is a process route's CPU per call in µs, its start-up cost
// taken out; 0 when the route has no process of its own.
func cpuPerCall(r *route, base time.Duration) float64 {
	if r.proc == nil || r.proc.calls.Load() == 0 {
		return 0
	}
	d := r.proc.cpu() - base
	if d < 0 {
		d = 0
	}
	return float64(d.Microseconds()) / float64(r.proc.calls.Load())
}

func ratioCell(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", r)
}

func cpuCell(us float64, measured bool) string {
	if !measured {
		return "-"
	}
	return fmt.Sprintf("%.0f", us)
}

func socketCell(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f×", r)
}
