package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/link/mcpserver"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// TestSoak runs 1,000 mixed tool calls with 16 in flight; every call gets
// exactly one answer.
func TestSoak(t *testing.T) {
	w := newWorld(t)
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = time.Millisecond })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := srv.Client()
	opt := mcpserver.Options{Link: mustLink(t, link.Config{Herdr: link.SocketHerdr{Client: c}, PaneID: "w1:p1"})}
	go func() { _ = mcpserver.Serve(t.Context(), inR, outW, opt); outW.Close() }()
	cl := mcpclient.New(outR, inW)
	defer cl.Close()
	ctx := t.Context()
	if _, err := cl.Initialize(ctx, "2025-06-18"); err != nil {
		t.Fatal(err)
	}
	const total, inFlight = 1000, 16
	sem := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	for i := 0; i < total; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			var name string
			var args map[string]any
			switch i % 5 {
			case 0:
				name = "herdr_link_peers"
			case 1:
				name, args = "herdr_link_send", map[string]any{"to": "reviewer", "message": fmt.Sprint("m", i), "when": "now"}
			case 2:
				name, args = "herdr_link", map[string]any{"action": "send", "to": "ops", "message": "x"}
			case 3:
				name, args = "herdr_link_close", map[string]any{"agent": "nobody"}
			case 4:
				if _, err := cl.Call(ctx, "ping", nil); err != nil {
					t.Error(err)
				}
				mu.Lock()
				counts["ping"]++
				mu.Unlock()
				return
			}
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			r, err := cl.CallTool(cctx, name, args)
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			mu.Lock()
			counts[strings.SplitN(r.Text(), ":", 2)[0]]++
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	sum := 0
	for _, n := range counts {
		sum += n
	}
	if sum != total || counts["PEER_NOT_FOUND"] != 400 || counts["ping"] != 200 {
		t.Fatalf("answers %v (sum %d)", counts, sum)
	}
	sends := 0
	for _, s := range w.Prompts("w1:p2") {
		if _, ok := link.Extract(s); ok {
			sends++
		}
	}
	if sends != 200 {
		t.Fatalf("reviewer received %d envelopes, want 200", sends)
	}
}

func FuzzStream(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `[1]` + "\n"))
	f.Add([]byte("\x00\xff\n{\n}\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":-1.5e3,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}` + "\n" +
		`[{"jsonrpc":"2.0","id":2,"method":"ping"},1,[],{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"herdr_link"}},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		// Whatever arrives, the server answers and keeps serving: a ping
		// sent after the input is still answered.
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		go func() {
			_ = mcpserver.Serve(t.Context(), inR, outW, mcpserver.Options{MaxLineBytes: 1024})
			outW.Close()
		}()
		cl := mcpclient.New(outR, inW)
		go func() { _, _ = inW.Write(append(append([]byte{}, in...), '\n')) }()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		// The input may use the client's own ids (1, 2, …): an error answer
		// to one of its lines can then reach the client's ping. The server
		// must answer a ping with a fresh id.
		for tries := 0; ; tries++ {
			_, err := cl.Call(ctx, "ping", nil)
			var re *mcpclient.RPCError
			if err == nil {
				break
			}
			if !errors.As(err, &re) || tries == 20 {
				t.Fatalf("server stopped serving after %q: %v", in, err)
			}
		}
		inW.Close()
	})
}
