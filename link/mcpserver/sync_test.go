package mcpserver_test

import (
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/link/mcpserver"
)

// Timing-sensitive behaviour, on the bubble's clock: in-memory pipes and
// an in-memory Herdr, so durations are exact and a loaded machine changes
// nothing.

// A ping is never stuck behind slow tool calls, and tool calls run
// concurrently.
func TestPingNotBlockedAndConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeHerdr()
		s := startSession(t, mcpserver.Options{Link: fakeLink(t, f)})
		s.activate()
		f.set(func(f *fakeHerdr) { f.latency = 300 * time.Millisecond })
		start := time.Now()
		s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"herdr_link_peers"}}`)
		s.until(`{"jsonrpc":"2.0","id":3,"result"`)
		one := time.Since(start)
		if one < 300*time.Millisecond {
			t.Fatalf("a call took %v against a Herdr of 300 ms", one)
		}
		start = time.Now()
		for i := 0; i < 4; i++ {
			s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"herdr_link_peers"}}`, 10+i))
		}
		s.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
		if l := s.next(); l != `{"jsonrpc":"2.0","id":"ping","result":{}}` {
			t.Fatalf("first answer %s, want the ping", l)
		}
		if el := time.Since(start); el != 0 {
			t.Fatalf("ping answered after %v", el)
		}
		for i := 0; i < 4; i++ {
			s.next()
		}
		if el := time.Since(start); el != one {
			t.Fatalf("4 calls of %v took %v: not concurrent", one, el)
		}
		s.in.Close()
		<-s.done
	})
}

func TestCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeHerdr()
		s := startSession(t, mcpserver.Options{Link: fakeLink(t, f)})
		s.activate()
		f.set(func(f *fakeHerdr) { f.hang = true })
		s.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"herdr_link_peers"}}`)
		synctest.Wait() // the call is in flight, waiting on Herdr
		s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"user"}}`)
		synctest.Wait() // the cancelled call has ended
		f.set(func(f *fakeHerdr) { f.hang = false })
		// The cancelled call is never answered; the next one is.
		s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"herdr_link_peers"}}`)
		for _, l := range s.until(`{"jsonrpc":"2.0","id":3,`) {
			if strings.Contains(l, `"slow"`) {
				t.Fatalf("cancelled call answered: %s", l)
			}
		}
		// A cancel for an unknown or finished request is tolerated.
		s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}`)
		s.send(`{"jsonrpc":"2.0","id":"sync","method":"ping"}`)
		if l := s.next(); l != `{"jsonrpc":"2.0","id":"sync","result":{}}` {
			t.Fatalf("unexpected output %s", l)
		}
		s.in.Close()
		<-s.done
	})
}

// On EOF the calls in flight get the shutdown grace, then are cancelled:
// Serve returns exactly one grace after the input ends.
func TestEOFEndsServingAndCancelsCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeHerdr()
		const grace = 500 * time.Millisecond
		s := startSession(t, mcpserver.Options{Link: fakeLink(t, f), ShutdownGrace: grace})
		s.activate()
		f.set(func(f *fakeHerdr) { f.hang = true })
		s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"herdr_link_peers"}}`)
		synctest.Wait()
		start := time.Now()
		s.in.Close()
		if err := <-s.done; err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el != grace {
			t.Fatalf("Serve returned %v after EOF, want the grace (%v)", el, grace)
		}
	})
}

// Initialize and tools/list never wait on Herdr, even a hung one.
func TestStartupNeverWaitsOnHerdr(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeHerdr()
		f.hang = true
		l := fakeLink(t, f)
		l = relink(t, l, func(c *link.Config) { c.PaneID = "w1:p3" })
		s := startSession(t, mcpserver.Options{Link: l, Bootstrap: true})
		start := time.Now()
		s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
		s.until(`{"jsonrpc":"2.0","id":1,"result"`)
		s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		s.until(`{"jsonrpc":"2.0","id":2,"result"`)
		if el := time.Since(start); el != 0 {
			t.Fatalf("start-up took %v against a hung Herdr", el)
		}
		s.cancel()
		<-s.done
	})
}

func TestBootstrapOnStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeHerdr()
		l := fakeLink(t, f)
		l = relink(t, l, func(c *link.Config) { c.PaneID = "w1:p3" })
		s := startSession(t, mcpserver.Options{Link: l, Bootstrap: true})
		s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
		s.until(`{"jsonrpc":"2.0","id":1,"result"`)
		s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		synctest.Wait() // the bootstrap has run
		if a, _ := f.find("w1:p3"); !strings.HasPrefix(a.Name, "hl-") {
			t.Fatalf("the occupant of w1:p3 is named %q after start-up, want an hl- name", a.Name)
		}
		renames := 0
		for _, m := range f.calls() {
			if m == "agent.rename" {
				renames++
			}
		}
		if renames != 1 {
			t.Fatalf("%d renames", renames)
		}
		s.in.Close()
		<-s.done
	})
}

// A session that ends (stdin closed) while the start-up bootstrap waits on
// a hung Herdr logs nothing above debug: nothing failed, and a warning or
// an error code such as NOT_IN_HERDR would blame Herdr or the host.
func TestBootstrapCutShortBySessionEndIsQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeHerdr()
		f.hang = true
		l := fakeLink(t, f)
		l = relink(t, l, func(c *link.Config) { c.PaneID = "w1:p3" })
		var logs strings.Builder
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		s := startSession(t, mcpserver.Options{Link: l, Bootstrap: true, Logger: logger})
		s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
		s.until(`{"jsonrpc":"2.0","id":1,"result"`)
		s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		synctest.Wait() // the bootstrap waits on Herdr
		s.in.Close()
		if err := <-s.done; err != nil {
			t.Fatal(err)
		}
		if got := logs.String(); strings.Contains(got, "bootstrap") {
			t.Errorf("logs at info and above mention the bootstrap:\n%s\nwant nothing about it", got)
		}
	})
}

// A broken output ends the session: Serve returns even though the input
// stays open.
func TestBrokenOutputEndsSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inR, inW := io.Pipe()
		defer inW.Close()
		outR, outW := io.Pipe()
		outR.Close()
		done := make(chan error, 1)
		go func() { done <- mcpserver.Serve(t.Context(), inR, outW, mcpserver.Options{}) }()
		_, _ = inW.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestLastLineWithoutNewline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		go func() {
			_ = mcpserver.Serve(t.Context(), inR, outW, mcpserver.Options{})
			outW.Close()
		}()
		go func() {
			_, _ = inW.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			inW.Close()
		}()
		out, _ := io.ReadAll(outR)
		if strings.TrimSpace(string(out)) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
			t.Fatalf("output %q", out)
		}
	})
}

// Serve returns only once every goroutine it started has ended: tool
// calls (even one that ignores its cancellation for a while), workers,
// the bootstrap, the jsonrpc2 connection's read loop. After Serve returns
// and everything else in the bubble is idle, no goroutine of the server
// or of jsonrpc2 is left (goleak's check, without the dependency).
func TestServeLeavesNoGoroutines(t *testing.T) {
	for _, end := range []string{"eof", "cancel", "broken output"} {
		t.Run(end, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFakeHerdr()
				l := fakeLink(t, f)
				s := startSession(t, mcpserver.Options{Link: l, Bootstrap: true, ShutdownGrace: 100 * time.Millisecond})
				s.activate()
				s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				for i := 0; i < 3; i++ {
					s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"herdr_link_peers"}}`, 10+i))
				}
				s.until(`{"jsonrpc":"2.0","id":12,`)
				// One call stays in Herdr for 5 s whatever its context says.
				f.set(func(f *fakeHerdr) { f.stuck = 5 * time.Second })
				s.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"herdr_link_peers"}}`)
				synctest.Wait()
				switch end {
				case "eof":
					s.in.Close()
				case "cancel":
					s.cancel()
				case "broken output":
					s.out.Close()
					s.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
				}
				if err := <-s.done; err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				if left := serverGoroutines(); len(left) > 0 {
					t.Fatalf("%d goroutines outlive Serve:\n%s", len(left), strings.Join(left, "\n\n"))
				}
			})
		})
	}
}

// serverGoroutines returns the stacks of the goroutines of a synctest
// bubble (this test's: tests run one at a time) that run code of the
// server or of jsonrpc2. Servers of other tests, outside bubbles, are not
// counted.
func serverGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		head, _, _ := strings.Cut(g, "\n")
		if !strings.Contains(head, "synctest bubble") {
			continue
		}
		if strings.Contains(g, "herdr-link/link/mcpserver.") || strings.Contains(g, "sourcegraph/jsonrpc2.") {
			out = append(out, g)
		}
	}
	return out
}
