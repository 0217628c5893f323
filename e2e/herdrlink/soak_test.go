package herdrlink

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// TestSoakBinary runs mixed calls with 16 in flight against the built
// binary: every call gets exactly one answer of the expected kind, every
// send is delivered once, and RSS afterwards is within 2× of idle. It runs
// 2,000 calls by default; HERDR_LINK_SOAK=100000 runs the full soak.
//
// Long: set-up, the load loop and the accounting of one soak run read best
// together.
func TestSoakBinary(t *testing.T) {
	total := 2000
	if v := os.Getenv("HERDR_LINK_SOAK"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 5 {
			t.Fatalf("HERDR_LINK_SOAK=%q: want a call count of at least 5", v)
		}
		total = n
	}
	const inFlight = 16
	w, err := sockettest.ParseWorld([]byte(e2eWorld))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = time.Millisecond })
	// Deliveries to one target are serialized: each keeps the
	// target's lock past the simulator's 1 ms Enter, and in fast mode no
	// longer, so 16 sends in flight to one reviewer do not queue behind
	// confirmation watches. The soak measures robustness, not delivery.
	cl, pid, idle := startActivated(t, srv.Env("w1:p1"), "-no-bootstrap", "-log-level", "error", "-delivery", "fast", "-submit-hold", "3ms")
	ctx := t.Context()

	sem := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	start := time.Now()
	for i := 0; i < total; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			var name string
			var args map[string]any
			switch i % 5 {
			case 0:
				name = "herdr_link_peers"
			case 1:
				// "now": every send is typed, none waits in the outbox
				// for the reviewer's turns (its bounds would refuse most).
				name, args = "herdr_link_send", map[string]any{"to": "reviewer", "message": fmt.Sprint("m", i), "when": "now"}
			case 2:
				name, args = "herdr_link", map[string]any{"action": "send", "to": "ops", "message": "x"}
			case 3:
				name, args = "herdr_link_close", map[string]any{"agent": "nobody"}
			case 4:
				_, err := cl.Call(cctx, "ping", nil)
				mu.Lock()
				if err != nil {
					counts["ping error"]++
				} else {
					counts["ping"]++
				}
				mu.Unlock()
				return
			}
			r, err := cl.CallTool(cctx, name, args)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				counts["rpc error"]++
				return
			}
			kind := strings.SplitN(r.Text(), ":", 2)[0]
			if !r.IsError {
				kind = name
			}
			counts[kind]++
		}(i)
	}
	wg.Wait()
	took := time.Since(start)
	var after int
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if after = rssKiB(t, pid); after <= 2*idle {
			break
		}
	}
	t.Logf("%d calls, %d in flight, in %v (%.0f calls/s); answers %v; RSS idle %d KiB, after %d KiB",
		total, inFlight, took.Round(time.Millisecond), float64(total)/took.Seconds(), counts, idle, after)
	per := total / 5
	want := map[string]int{"herdr_link_peers": per, "herdr_link_send": per, "PEER_NOT_FOUND": 2 * per, "ping": per}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%s: %d answers, want %d", k, counts[k], n)
		}
	}
	if len(counts) != len(want) {
		t.Errorf("unexpected answers: %v", counts)
	}
	if n := envelopes(w, "w1:p2"); n != per {
		t.Errorf("reviewer received %d envelopes, want %d", n, per)
	}
	if n := envelopes(w, "w2:p1"); n != 0 {
		t.Errorf("a message crossed workspaces: %d", n)
	}
	if after > 2*idle {
		t.Errorf("RSS %d KiB after the soak, over 2× idle (%d KiB)", after, idle)
	}
}

// startActivated starts the herdr-link binary with args in a pane's
// environment, initializes and activates it, lets start-up settle, and
// returns the client (closed when the test ends), its pid and its idle RSS.
func startActivated(t *testing.T, env []string, args ...string) (*mcpclient.Client, int, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	cl, err := mcpclient.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	ctx := t.Context()
	if _, err := cl.Initialize(ctx, "2025-06-18"); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CallTool(ctx, "herdr_link", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let start-up settle before measuring
	return cl, cmd.Process.Pid, rssKiB(t, cmd.Process.Pid)
}
