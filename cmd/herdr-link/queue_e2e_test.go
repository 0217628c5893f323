package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// TestBinaryPingWhileTenSendsQueued is link/mcpserver's
// TestPingWhileTenSendsQueued against the built binary, which runs Go code
// on one thread (procs.go): ten sends wait on a Herdr that does not answer
// agent.prompt, and a ping written after them is answered first. No clock
// is read: were the ping behind the sends, it would come after their
// answers, which cannot come before the call deadline.
func TestBinaryPingWhileTenSendsQueued(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(e2eWorld))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w)
	cmd := exec.Command(binary, "-no-bootstrap", "-log-level", "error", "-delivery", "fast", "-timeout", "1s")
	cmd.Env = append(os.Environ(), srv.Env("w1:p1")...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	out := bufio.NewScanner(outPipe)
	out.Buffer(nil, 1<<20)
	// next returns the next response line (notifications skipped).
	next := func() string {
		for out.Scan() {
			if l := out.Text(); strings.Contains(l, `"id":`) {
				return l
			}
		}
		t.Fatalf("the server's output ended: %v", out.Err())
		return ""
	}
	write := func(lines ...string) {
		if _, err := in.Write([]byte(strings.Join(lines, "\n") + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"herdr_link","arguments":{}}}`)
	next()
	next()
	srv.SetFault(schema.MethodAgentPrompt, sockettest.Fault{Hang: true})
	var lines []string
	for i := range 10 {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"herdr_link_send","arguments":{"to":"reviewer","message":"queued %d"}}}`, 100+i, i))
	}
	write(append(lines, `{"jsonrpc":"2.0","id":"ping","method":"ping"}`)...)
	if l := next(); l != `{"jsonrpc":"2.0","id":"ping","result":{}}` {
		t.Fatalf("first answer %s, want the ping", l)
	}
	seen := map[int]bool{}
	for len(seen) < 10 {
		l := next()
		for i := range 10 {
			if strings.HasPrefix(l, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":`, 100+i)) {
				seen[i] = true
			}
		}
	}
}
