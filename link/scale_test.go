package link_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// scaleSession is a generated session served by the simulator, with the
// Link of its bench-self agent and the raw agent.list answer.
type scaleSession struct {
	srv  *sockettest.Server
	link *link.Link
	raw  []byte
}

func newScaleSession(tb testing.TB, agents, workspaces int) scaleSession {
	tb.Helper()
	w, err := sockettest.GeneratedWorld(agents, workspaces)
	if err != nil {
		tb.Fatal(err)
	}
	srv := sockettest.NewServer(w)
	tb.Cleanup(srv.Close)
	self, _ := w.Agent("bench-self")
	// What is measured here is allocations and time per call, not whether
	// a 2 MB answer comes within the default 5 s on a loaded machine (with
	// the race detector, the simulator's first encoding of 10,000 agents
	// can take longer).
	c := srv.Client()
	c.Timeout = 2 * time.Minute
	l := mustLink(tb, link.Config{Herdr: link.SocketHerdr{Client: c}, PaneID: self.PaneID})
	raw, err := c.RoundTrip(tb.Context(), listRequest)
	if err != nil {
		tb.Fatal(err)
	}
	return scaleSession{srv: srv, link: l, raw: raw}
}

var listRequest = []byte(`{"id":"x","method":"agent.list","params":{}}`)

// decodeList decodes an agent.list answer the way peer resolution needs
// it, and nothing else: the floor of resolving peers from that answer.
func decodeList(raw []byte) (int, error) {
	var r struct {
		ID     string `json:"id"`
		Result struct {
			Type   string       `json:"type"`
			Agents []link.Agent `json:"agents"`
		} `json:"result"`
	}
	err := jsonx.Unmarshal(raw, &r)
	return len(r.Result.Agents), err
}

// BenchmarkPeersAtScale resolves peers in a 10,000-agent, 500-workspace
// session and, interleaved in the same loop, decodes that session's
// agent.list answer alone. It reports both p50s and their ratio
// (resolve-per-decode: resolution over Herdr's socket against decoding
// the bytes it reads); ns/op covers one resolution plus one decode.
func BenchmarkPeersAtScale(b *testing.B) {
	for _, size := range []struct{ agents, workspaces int }{{1000, 50}, {10000, 500}} {
		b.Run(fmt.Sprintf("agents=%d/workspaces=%d", size.agents, size.workspaces), func(b *testing.B) {
			s := newScaleSession(b, size.agents, size.workspaces)
			ctx := b.Context()
			if _, err := s.link.Peers(ctx); err != nil {
				b.Fatal(err)
			}
			var resolve, decode []time.Duration
			for b.Loop() {
				t0 := time.Now()
				res, err := s.link.Peers(ctx)
				t1 := time.Now()
				n, derr := decodeList(s.raw)
				t2 := time.Now()
				if err != nil || derr != nil || n != size.agents || len(res.Peers) == 0 {
					b.Fatalf("peers %d, %v; decoded %d, %v", len(res.Peers), err, n, derr)
				}
				resolve, decode = append(resolve, t1.Sub(t0)), append(decode, t2.Sub(t1))
			}
			r, d := p50(resolve), p50(decode)
			b.ReportMetric(float64(r.Nanoseconds()), "p50-resolve-ns")
			b.ReportMetric(float64(d.Nanoseconds()), "p50-decode-ns")
			b.ReportMetric(float64(r)/float64(d), "resolve-per-decode")
			b.ReportMetric(float64(len(s.raw)), "list-bytes")
		})
	}
}

func p50(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[(len(ds)-1)/2]
}

// TestPeersAllocsLinear: peer resolution allocates in proportion to the
// session's agents (a constant per call plus a bounded amount per agent),
// from 100 to 10,000 agents.
func TestPeersAllocsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 10,000-agent session")
	}
	ctx := t.Context()
	per := map[int]float64{}
	for _, size := range []struct{ agents, workspaces int }{{100, 5}, {1000, 50}, {10000, 500}} {
		s := newScaleSession(t, size.agents, size.workspaces)
		allocs := testing.AllocsPerRun(5, func() {
			if _, err := s.link.Peers(ctx); err != nil {
				t.Fatal(err)
			}
		})
		per[size.agents] = allocs
		t.Logf("%5d agents: %.0f allocations per resolution (%.2f per agent)", size.agents, allocs, allocs/float64(size.agents))
	}
	// Linear: the growth from 1,000 to 10,000 agents is at most ten
	// times the growth from 100 to 1,000, and a resolution costs at most 8
	// allocations per agent. With the agents' strings shared, a
	// resolution's own allocations are nearly constant, so the count is
	// dominated by what else runs in this process while it is measured
	// (the simulator writing a 2 MB answer, the race detector's runtime):
	// a few hundred either way, hence the slack. Growth faster than
	// linear still fails (n²/1000 allocations: +990, then +99,000).
	g1, g2 := per[1000]-per[100], per[10000]-per[1000]
	if g2 > 10*g1*1.1+512 {
		t.Errorf("allocations grow faster than the agents: +%.0f for 900 agents, +%.0f for 9,000", g1, g2)
	}
	if per[10000] > 8*10000 {
		t.Errorf("%.0f allocations for 10,000 agents", per[10000])
	}
}
