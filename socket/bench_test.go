package socket_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/testsupport/lineserver"
	"github.com/herdr-link/herdr-link/socket"
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

// BenchmarkExchangeDial is an agent.list of 100 agents (herdr-bench's
// world) from a simulator in a child process, as herdr-link meets Herdr,
// with the client's default dial (on Linux a blocking connection: the
// read waits in the kernel) and with net's dialer (the read waits in the
// network poller), side by side. cpu-µs/op is this process's user and
// system time per call: the client's alone.
func BenchmarkExchangeDial(b *testing.B) {
	path := childSimulator(b)
	for _, tc := range []struct {
		name string
		dial func(ctx context.Context, path string) (net.Conn, error)
	}{
		{"dial=default", nil},
		{"dial=net", func(ctx context.Context, path string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := &socket.Client{Path: path, Dial: tc.dial}
			ctx := b.Context()
			if _, err := c.AgentList(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				if _, err := c.AgentList(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// envChildSim makes the test binary a simulator of 100 agents (see
// TestMain) that prints its socket path and serves until stdin closes.
const envChildSim = "HERDR_LINK_TEST_CHILD_SIM"

func TestMain(m *testing.M) {
	if os.Getenv(envChildSim) == "1" {
		w := sockettest.DefaultWorld()
		if _, err := w.AddAgents("w1:t1", 95, "bench-"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		srv := sockettest.NewServer(w)
		fmt.Println(srv.Client().Path)
		_, _ = io.Copy(io.Discard, os.Stdin)
		srv.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childSimulator starts the test binary as a simulator in a process of
// its own and returns its socket path; it ends with b.
func childSimulator(b *testing.B) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChildSim+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	path, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return strings.TrimSpace(path)
}
