package herdrlink

import (
	"fmt"
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
	s := startServerArgs(t, []string{"-delivery", "fast", "-timeout", "1s"}, srv.Env("w1:p1")...)
	s.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"herdr_link","arguments":{}}}`)
	s.answers(t, 2)
	srv.SetFault(schema.MethodAgentPrompt, sockettest.Fault{Hang: true})
	var lines []string
	for i := range 10 {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"herdr_link_send","arguments":{"to":"reviewer","message":"queued %d"}}}`, 100+i, i))
	}
	// One write: the ping is on stdin after all ten sends.
	s.send(t, strings.Join(append(lines, `{"jsonrpc":"2.0","id":"ping","method":"ping"}`), "\n"))
	got := s.answers(t, 11)
	if l := strings.TrimSpace(got[0]); l != `{"jsonrpc":"2.0","id":"ping","result":{}}` {
		t.Fatalf("first answer %s, want the ping", l)
	}
	for i := range 10 {
		found := false
		for _, l := range got[1:] {
			found = found || strings.HasPrefix(l, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":`, 100+i))
		}
		if !found {
			t.Errorf("send %d got no result:\n%s", 100+i, strings.Join(got, ""))
		}
	}
}
