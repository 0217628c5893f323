package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/internal/sibling"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// hook is 'herdr-bench hook': what the plugin's event hook (herdr-link
// deliver, run by Herdr on every pane.agent_status_changed) costs when
// nothing is due for the pane, on an embedded simulator: wall time per
// run and socket requests per run, beside the floor of starting the
// binary at all (herdr-link version), in one interleaved run. The series
// differ in what waits in the outbox for other agents: nothing; messages
// whose sender still runs; messages whose sender exited (orphans, each
// of another target: one file read each).
func hook(args []string, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-bench hook [flags]", "Measures the plugin's event hook (herdr-link deliver) when nothing is due for its pane, on an embedded simulator.", stderr)
	n := fs.Int("n", 200, "runs per series")
	held := fs.Int("held", 100, "messages waiting for other agents in the held series")
	linkBin := fs.String("link", "", "the herdr-link binary (default: herdr-link beside herdr-bench, then on PATH)")
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	exe, err := sibling.Find("herdr-link", "link", *linkBin)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-bench hook:", err)
		return 1
	}
	if err := runHook(exe, *n, *held, stdout); err != nil {
		fmt.Fprintln(stderr, "herdr-bench hook:", err)
		return 1
	}
	return 0
}

// hookSeries is one series of the hook measurement.
type hookSeries struct {
	name string
	args []string
	ds   []time.Duration
	reqs int
}

func runHook(exe string, n, held int, out io.Writer) error {
	w, err := holdWorld(1, 0)
	if err != nil {
		return err
	}
	srv := sockettest.NewUnstartedServer(w)
	srv.Start()
	defer srv.Close()
	a, _ := w.Agent("i0")
	ev, err := jsonx.Marshal(schema.EventEnvelope{Event: "pane.agent_status_changed", Data: schema.EventData{
		PaneAgentStatusChanged: &schema.EventDataPaneAgentStatusChanged{PaneID: a.PaneID, WorkspaceID: a.WorkspaceID, AgentStatus: "idle"}}})
	if err != nil {
		return err
	}
	env := append(os.Environ(), "HERDR_ENV=1", "HERDR_SOCKET_PATH="+srv.Path(), "HERDR_PLUGIN_EVENT=pane.agent_status_changed",
		"HERDR_PLUGIN_EVENT_JSON="+string(ev), "HERDR_LINK_LOG=warn")
	st, err := hookStore(srv.Path())
	if err != nil {
		return err
	}
	defer os.RemoveAll(st.Dir)
	run := func(s *hookSeries) error {
		cmd := exec.Command(exe, s.args...)
		cmd.Env = env
		before := len(srv.Requests())
		start := time.Now()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		d := time.Since(start)
		if err != nil || stderr.Len() > 0 {
			return fmt.Errorf("%s %v: %v %s", exe, s.args, err, stderr.String())
		}
		s.ds = append(s.ds, d)
		s.reqs += len(srv.Requests()) - before
		return nil
	}
	floor := &hookSeries{name: "herdr-link version (the floor: exec alone)", args: []string{"version"}}
	empty := &hookSeries{name: "deliver, outbox empty", args: []string{"deliver"}}
	series := []*hookSeries{floor, empty}
	measure := func(ss ...*hookSeries) error {
		for i := range n + 10 {
			for _, s := range ss {
				if err := run(s); err != nil {
					return err
				}
				if i < 10 { // warm-up
					s.ds, s.reqs = s.ds[:0], 0
				}
			}
		}
		return nil
	}
	if err := measure(floor, empty); err != nil {
		return err
	}
	live := &hookSeries{name: fmt.Sprintf("deliver, %d held for other agents, senders running", held), args: []string{"deliver"}}
	if err := fillHeld(st, held, "live"); err != nil {
		return err
	}
	if err := measure(live); err != nil {
		return err
	}
	st.Release() // their sender exits: they are orphans now
	orphans := &hookSeries{name: fmt.Sprintf("deliver, %d orphaned for other agents", held), args: []string{"deliver"}}
	if err := measure(orphans); err != nil {
		return err
	}
	series = append(series, live, orphans)
	fmt.Fprintf(out, "herdr-bench hook: herdr-link deliver as Herdr's pane.agent_status_changed hook, nothing due for its pane, embedded simulator\n\n")
	base := holdSummary(floor.ds).p50
	for _, s := range series {
		sm := holdSummary(s.ds)
		fmt.Fprintf(out, "%-58s n=%-4d p50 %6.2f ms  p90 %6.2f ms  max %6.2f ms  (p50 %+.2f ms vs the floor)  socket requests/run %.2f\n",
			s.name, sm.n, holdMS(sm.p50), holdMS(sm.p90), holdMS(sm.max), holdMS(sm.p50-base), float64(s.reqs)/float64(max(sm.n, 1)))
	}
	return nil
}

// hookStore opens the outbox of the simulator at path where herdr-link
// finds it (the system's lock directory rules).
func hookStore(path string) (*outbox.Store, error) {
	pl := &panelock.Locker{Scope: path}
	dir, err := pl.DirPath()
	if err != nil {
		return nil, err
	}
	return outbox.Open(dir, pl.ScopeID())
}

// fillHeld holds n messages in st, each for a target of its own that is
// not an agent of the simulator (so nothing is ever typed).
func fillHeld(st *outbox.Store, n int, tag string) error {
	if n < 0 {
		return errors.New("-held must not be negative")
	}
	now := time.Now()
	for i := range n {
		pane := fmt.Sprintf("w9:p%d", i)
		_, err := st.Add(outbox.Message{ID: fmt.Sprintf("hl_bench%s%d", tag, i), From: "bench-self", To: fmt.Sprintf("t%d", i),
			TargetKey: "pane:" + pane, FromKey: "pane:w1:p1", PaneID: pane, WorkspaceID: "w9", Text: "x",
			Expires: now.Add(time.Hour)}, now)
		if err != nil {
			return err
		}
	}
	return nil
}
