package mcpserver_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// Ten sends queued on a Herdr that does not answer agent.prompt: a ping
// sent after them is answered first, and every send is answered in the
// end. No clock is read: were the ping behind the sends, it would come
// after their answers, which cannot come before the call deadline.
func TestPingWhileTenSendsQueued(t *testing.T) {
	h := start(t, hopt{timeout: time.Second})
	h.call(1, "initialize", `{"protocolVersion":"2025-06-18"}`)
	h.call(2, "tools/call", `{"name":"herdr_link"}`)
	h.srv.SetFault(schema.MethodAgentPrompt, sockettest.Fault{Hang: true})
	for i := 0; i < 10; i++ {
		h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"herdr_link_send","arguments":{"to":"reviewer","message":"queued %d"}}}`, 100+i, i))
	}
	h.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	if l := h.next(); l != `{"jsonrpc":"2.0","id":"ping","result":{}}` {
		t.Fatalf("first answer %s, want the ping", l)
	}
	seen := map[string]bool{}
	for len(seen) < 10 {
		l := h.next()
		for i := 0; i < 10; i++ {
			if strings.HasPrefix(l, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":`, 100+i)) {
				seen[fmt.Sprint(100+i)] = true
			}
		}
	}
}
