package socket_test

import (
	"fmt"
	"net"
	"testing"

	"github.com/herdr-link/herdr-link/internal/testsupport/lineserver"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// BenchmarkCall measures one call over a real Unix socket against the
// simulator, response decoding included.
func BenchmarkCall(b *testing.B) {
	ctx := b.Context()
	b.Run("method=ping", func(b *testing.B) {
		srv := sockettest.NewServer(nil)
		defer srv.Close()
		c := srv.Client()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Ping(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("method=agent.list/agents=%d", n), func(b *testing.B) {
			w := sockettest.DefaultWorld()
			if _, err := w.AddAgents("w1:t1", n-5, "bench-"); err != nil {
				b.Fatal(err)
			}
			srv := sockettest.NewServer(w)
			defer srv.Close()
			c := srv.Client()
			agents, err := c.AgentList(ctx)
			if err != nil || len(agents) != n {
				b.Fatalf("%d agents, %v", len(agents), err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.AgentList(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/agent")
		})
	}
}

// BenchmarkBareUnixRoundTrip is the floor: dial, one line out, one line in,
// close, with a server that does nothing else.
func BenchmarkBareUnixRoundTrip(b *testing.B) {
	reply := []byte(`{"id":"1","result":{"type":"ok"}}` + "\n")
	srv, err := lineserver.New(func([]byte) []byte { return reply })
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	path := srv.Path()
	req := []byte(`{"id":"1","method":"ping","params":{}}` + "\n")
	buf := make([]byte, 256)
	b.ReportAllocs()
	for b.Loop() {
		c, err := net.Dial("unix", path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Read(buf); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
