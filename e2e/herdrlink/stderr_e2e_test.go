//go:build unix

package herdrlink

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// A server whose stderr is a pipe nobody reads keeps serving: every tool
// call of a long run that logs a line each (a message held, at debug
// level) is answered, and once the pipe is read again a line says how
// many log lines were dropped meanwhile.
func TestStderrNobodyReads(t *testing.T) {
	const calls, targets = 2000, 40
	var specs [][2]string
	for i := range targets {
		specs = append(specs, [2]string{fmt.Sprintf("w%d", i), `"kind":"claude","status":"working"`})
	}
	w := holdWorld(t, 1, specs)
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	o := newOutboxEnv(t)
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Held messages expire soon: the store never reaches its bounds
	// however many calls hold one.
	args := append(append([]string{}, deliveryFlags...), "-log-level", "debug", "-hold", "200ms", "-no-notices")
	cmd := exec.Command(o.bin, args...)
	cmd.Env = append(append(os.Environ(), srv.Env(paneOf(w, "s1"))...), o.env)
	cmd.Stderr = wr
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	wr.Close() // the server holds the only write end
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	s := session{ClientSession: cs}
	call(t, s, "herdr_link", nil)
	no := false
	st := o.store(t, srv)
	for i := range calls {
		// The store holds 1,024 messages at most: every 500 calls, the
		// courier's next round expires what was held before.
		if i%500 == 499 && !until(20*time.Second, func() bool { return heldIn(t, st) < 200 }) {
			t.Fatalf("after %d calls: %d messages still held", i, heldIn(t, st))
		}
		cctx, ccancel := context.WithTimeout(t.Context(), 10*time.Second)
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "herdr_link_send",
			Arguments: map[string]any{"to": fmt.Sprintf("w%d", i%targets), "message": fmt.Sprint("message ", i), "expect_reply": no}})
		ccancel()
		if err != nil {
			t.Fatalf("call %d of %d with stderr unread: %v", i+1, calls, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError || !strings.Contains(text, "held") {
			t.Fatalf("call %d: %q (error %v), want held", i+1, text, res.IsError)
		}
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("stderr ended without a line saying log lines were dropped")
			}
			if strings.Contains(l, "log lines dropped") {
				return
			}
		case <-deadline:
			t.Fatal("no line saying log lines were dropped within 10 s of reading stderr")
		}
	}
}

// heldIn counts the messages held or being typed in st.
func heldIn(t *testing.T, st *outbox.Store) int {
	t.Helper()
	ents, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if e.Held() {
			n++
		}
	}
	return n
}
