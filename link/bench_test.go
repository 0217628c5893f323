package link_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// BenchmarkResolvePeers is herdr-link's peer resolution over a real Unix
// socket against the simulator, by session size.
func BenchmarkResolvePeers(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("transport=socket/agents=%d", n), func(b *testing.B) {
			w := sockettest.DefaultWorld()
			if _, err := w.AddAgents("w1:t1", n-6, "bench-"); err != nil {
				b.Fatal(err)
			}
			srv := sockettest.NewServer(w)
			defer srv.Close()
			l := mustLink(b, link.Config{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: "w1:p1"})
			ctx := b.Context()
			if _, err := l.Peers(ctx); err != nil {
				b.Fatal(err)
			}
			srv.ResetRequests()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.Peers(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(srv.Requests()))/float64(b.N), "conns/op")
		})
	}
}

// BenchmarkSendWhen: a send to an idle target with "when": "idle" (its
// look under the lock: agent.get, pane.read, the outbox) against "now";
// both record the request. Between sends (timer stopped) the target's
// short turn ends, so each send finds it idle with an empty composer.
func BenchmarkSendWhen(b *testing.B) {
	for _, w := range []link.When{link.WhenNow, link.WhenIdle} {
		b.Run("when="+w.String(), func(b *testing.B) {
			l, srv := benchLink(b, `{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
 {"id":"w1:p1","agent":{"kind":"claude","name":"brain","status":"idle"}},
 {"id":"w1:p2","agent":{"kind":"claude","name":"quick","status":"idle","turn_ms":2,"submit_ms":1}}]}]}]}`, "w1:p1")
			world := srv.World
			ctx := b.Context()
			b.ReportAllocs()
			sent := 0
			for b.Loop() {
				b.StopTimer()
				// The last send's turn has started and ended.
				for a, _ := world.Agent("w1:p2"); len(world.Submissions("w1:p2")) < sent || a.AgentStatus != "idle"; a, _ = world.Agent("w1:p2") {
					time.Sleep(time.Millisecond)
				}
				_ = l.Wait(ctx)
				sent++
				b.StartTimer()
				r, err := l.Send(ctx, link.SendRequest{To: "quick", Message: "benchmark", When: w})
				if err != nil || r.Delivery == link.DeliveryHeld {
					b.Fatal(r, err)
				}
			}
		})
	}
}

// BenchmarkSend is a "now" send (typed at once, whatever the target is
// doing): the default, "idle", holds the second message for the target
// the first one made busy, and this Link has no outbox to hold it in.
func BenchmarkSend(b *testing.B) {
	srv := sockettest.NewServer(nil)
	defer srv.Close()
	l := mustLink(b, link.Config{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: "w1:p1"})
	ctx := b.Context()
	if _, err := l.Peers(ctx); err != nil {
		b.Fatal(err)
	}
	srv.ResetRequests()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "benchmark", When: link.WhenNow}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(srv.Requests()))/float64(b.N), "conns/op")
}

func BenchmarkClose(b *testing.B) {
	srv := sockettest.NewServer(nil)
	defer srv.Close()
	l := mustLink(b, link.Config{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: "w1:p1"})
	ctx := b.Context()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		ids, err := srv.World.AddAgents("w1:t1", 1, fmt.Sprintf("victim%d-", i))
		if err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("victim%d-0", i)
		i++
		_ = ids
		srv.ResetRequests()
		b.StartTimer()
		if _, err := l.Close(ctx, name); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(srv.Requests())), "conns/op")
}

// BenchmarkExtractAll: finding envelopes in a Claude Code turn that holds
// two tagged pastes and a draft, and in 1 MiB of JSON-like text that holds
// none (the scanner's worst practical case).
func BenchmarkExtractAll(b *testing.B) {
	w1, _ := link.Wrap(link.Envelope{Protocol: link.Protocol, ID: "hl_a1_aaaa", From: "brain", To: "reviewer", Message: strings.Repeat("review the diff {\"a\":1}\n", 40)})
	w2, _ := link.Wrap(link.Envelope{Protocol: link.Protocol, ID: "hl_b2_bbbb", From: "writer", To: "reviewer", Message: "done"})
	turn := "half typed draft\n\n<pasted_content id=\"1\">" + w1 + "</pasted_content id=\"1\">\n\n<pasted_content id=\"2\">" + w2 + "</pasted_content id=\"2\">"
	noise := strings.Repeat(`{"k":[1,{"x":"herdr-link/1"}],"v":"y"} `, (1<<20)/40)
	for _, c := range []struct {
		name, text string
		want       int
	}{{"turn", turn, 2}, {"noise-1MiB", noise, 0}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				if n := len(link.ExtractAll(c.text)); n != c.want {
					b.Fatalf("%d envelopes", n)
				}
			}
		})
	}
}

// BenchmarkConfirmedSend is a confirmed send (-delivery confirm) over a
// real Unix socket to an idle simulated agent that submits 1 ms after
// Herdr's Enter, which comes 5 ms after the text: the confirmation watch
// woken by the target's status events (events) against today's polling
// watch (poll), on Herdr's 100 ms subscription tick and on a 1 ms one.
// sub-ms/op is what opening the subscription costs before the prompt.
func BenchmarkConfirmedSend(b *testing.B) {
	for _, v := range []string{"0.8.2", sockettest.NewestHerdr} {
		for _, tick := range []time.Duration{100 * time.Millisecond, time.Millisecond} {
			for _, events := range []bool{false, true} {
				watch := map[bool]string{false: "poll", true: "events"}[events]
				b.Run(fmt.Sprintf("herdr=%s/tick=%v/watch=%s", v, tick, watch), func(b *testing.B) {
					benchConfirmed(b, v, tick, events)
				})
			}
		}
	}
}

func benchConfirmed(b *testing.B, v string, tick time.Duration, events bool) {
	spec, err := sockettest.GeneratedSpec(10, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, ws := range spec.Workspaces {
		for _, p := range ws.Tabs[0].Panes {
			one := 1
			p.Agent.TurnMS, p.Agent.SubmitMS = 1, &one
		}
	}
	w, err := sockettest.NewWorld(spec)
	if err != nil {
		b.Fatal(err)
	}
	srv := sockettest.NewUnstartedServer(w)
	srv.Tick, srv.SubmitDelay = tick, 5*time.Millisecond
	if err := srv.UseHerdr(v); err != nil {
		b.Fatal(err)
	}
	srv.Start()
	defer srv.Close()
	var h link.Herdr = link.NewSocketHerdr(srv.Client())
	if !events {
		h = noEvents{h}
	}
	self, _ := w.Agent("bench-self")
	var peers []string
	for _, id := range w.PaneIDs() {
		if a, ok := w.Agent(id); ok && a.Name != nil && *a.Name != "bench-self" {
			peers = append(peers, *a.Name)
		}
	}
	// No delivery lock: the sends go to the peers in turn, and a lock's
	// hold after each would not be the watch's cost.
	l := mustLink(b, link.Config{Herdr: h, PaneID: self.PaneID, Delivery: link.DeliveryConfirm, SubmitHold: 20 * time.Millisecond})
	ctx := b.Context()
	if _, err := l.Peers(ctx); err != nil {
		b.Fatal(err)
	}
	srv.ResetRequests()
	i := 0
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		r, err := l.Send(ctx, link.SendRequest{To: peers[i%len(peers)], Message: "benchmark"})
		took = append(took, time.Since(start))
		i++
		if err != nil || r.Delivery != link.DeliverySubmitted {
			b.Fatalf("send = %s, %v; want %s", r.Delivery, err, link.DeliverySubmitted)
		}
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*9/10].Microseconds())/1000, "p90-ms")
	b.ReportMetric(float64(len(srv.Requests()))/float64(b.N), "conns/op")
	// What a subscription costs to open (and close), alone.
	if events {
		const n = 50
		start := time.Now()
		for range n {
			s, err := h.(link.PaneWatcher).WatchPanes(ctx, []string{self.PaneID})
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/n/1000, "sub-ms/op")
	}
	_ = l.Wait(ctx)
}

// BenchmarkPeersWithLedger is herdr_link_peers with an empty store and
// with 10,000 entries in it (requests of many senders, most of them
// ended, and held messages): the store must cost peers little.
func BenchmarkPeersWithLedger(b *testing.B) {
	for _, n := range []int{0, 10000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			srv := sockettest.NewServer(nil)
			defer srv.Close()
			st, err := outbox.Open(b.TempDir(), "bench")
			if err != nil {
				b.Fatal(err)
			}
			// Room for them all: the default bounds (1,024 waiting)
			// refuse a store this full.
			st.MaxMessages, st.MaxPerTarget = 2*n+1, 2*n+1
			fillLedger(b, st, n)
			l := mustLink(b, link.Config{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: "w1:p1", Outbox: st})
			ctx := b.Context()
			if _, err := l.Peers(ctx); err != nil {
				b.Fatal(err)
			}
			// A listing is reused once taken well after the directory's
			// last change: take one now.
			time.Sleep(100 * time.Millisecond)
			if _, err := l.Peers(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.Peers(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// fillLedger adds n entries to st: requests from 500 senders to 20
// targets, four in five of them ended, and a held message every tenth.
func fillLedger(b *testing.B, st *outbox.Store, n int) {
	now := time.Now()
	for i := range n {
		from, to := fmt.Sprintf("term_s%d", i%500), fmt.Sprintf("term_t%d", i%20)
		id := fmt.Sprintf("hl_b%d_x%d", i, i)
		if i%10 == 9 {
			to = fmt.Sprintf("term_t%d", (i/10)%20)
			if _, err := st.Add(outbox.Message{ID: id, TargetKey: to, FromKey: from, Expires: now.Add(time.Hour), Text: "x"}, now); err != nil {
				b.Fatal(err)
			}
			continue
		}
		r, err := st.AddRequest(outbox.Request{ID: id, TargetKey: to, FromKey: from, Expires: now.Add(time.Hour)}, now)
		if err != nil {
			b.Fatal(err)
		}
		if i%5 != 0 {
			if _, _, err := st.EndRequest(r.Entry(), outbox.OutcomeHandled, now, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkWaitReplyLatency: how long after a request's outcome is
// recorded (by another process's store handle) herdr_link_wait returns.
func BenchmarkWaitReplyLatency(b *testing.B) {
	srv := sockettest.NewServer(nil)
	defer srv.Close()
	dir := b.TempDir()
	mine, err := outbox.Open(dir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	theirs, err := outbox.Open(dir, "bench")
	if err != nil {
		b.Fatal(err)
	}
	l := mustLink(b, link.Config{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: "w1:p1", Outbox: mine})
	self, ok := srv.World.Agent("w1:p1")
	if !ok {
		b.Fatal("no brain")
	}
	ctx := b.Context()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		i++
		r, err := mine.AddRequest(outbox.Request{ID: fmt.Sprintf("hl_w%d_y%d", i, i), To: "reviewer", TargetKey: "term_r", FromKey: self.TerminalID, Expires: time.Now().Add(time.Hour)}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan time.Time, 1)
		go func() {
			if _, err := l.WaitReply(ctx, r.ID, 10*time.Second, nil); err != nil {
				b.Error(err)
			}
			done <- time.Now()
		}()
		time.Sleep(30 * time.Millisecond) // the wait is under way
		changed := time.Now()
		if _, _, err := theirs.EndRequest(r.Entry(), outbox.OutcomeReplied, changed, nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-done).Sub(changed))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50-after-change")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "ms-p90-after-change")
}

// benchLink serves world (a world file) on a simulator that sees a
// submission after 1 ms, closed when b ends, and returns the Link of pane
// on it with an outbox of its own and a 1 ms submit hold, and the
// simulator.
func benchLink(b *testing.B, world, pane string) (*link.Link, *sockettest.Server) {
	b.Helper()
	w, err := sockettest.ParseWorld([]byte(world))
	if err != nil {
		b.Fatal(err)
	}
	srv := sockettest.NewServer(w)
	srv.SubmitDelay = time.Millisecond
	b.Cleanup(srv.Close)
	st, err := outbox.Open(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	return mustLink(b, link.Config{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: pane, Outbox: st, SubmitHold: time.Millisecond}), srv
}
