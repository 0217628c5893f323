package link_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

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
