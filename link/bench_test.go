package link_test

import (
	"context"
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
			l := &link.Link{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: "w1:p1"}
			ctx := context.Background()
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

func BenchmarkSend(b *testing.B) {
	srv := sockettest.NewServer(nil)
	defer srv.Close()
	l := &link.Link{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: "w1:p1"}
	ctx := context.Background()
	if _, err := l.Peers(ctx); err != nil {
		b.Fatal(err)
	}
	srv.ResetRequests()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "benchmark"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(srv.Requests()))/float64(b.N), "conns/op")
}

func BenchmarkClose(b *testing.B) {
	srv := sockettest.NewServer(nil)
	defer srv.Close()
	l := &link.Link{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: "w1:p1"}
	ctx := context.Background()
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
			fillLedger(b, st, n)
			l := &link.Link{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: "w1:p1", Outbox: st}
			ctx := context.Background()
			if _, err := l.Peers(ctx); err != nil {
				b.Fatal(err)
			}
			// The store's listing is reused once the directory is a second old.
			time.Sleep(1100 * time.Millisecond)
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
	l := &link.Link{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: "w1:p1", Outbox: mine}
	self, ok := srv.World.Agent("w1:p1")
	if !ok {
		b.Fatal("no brain")
	}
	ctx := context.Background()
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
