package mcpserver_test

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/link/mcpserver"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// A request whose id is in use by a request still in flight is refused at
// once (-32600, with that id), and a cancellation reaches the live request.
func TestDuplicateInFlightIDRefused(t *testing.T) {
	h := start(t, hopt{timeout: 30 * time.Second})
	h.call(1, "initialize", `{"protocolVersion":"2025-06-18"}`)
	h.call(2, "tools/call", `{"name":"herdr_link"}`)
	h.srv.SetFault(schema.MethodAgentList, sockettest.Fault{Hang: true})
	h.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"herdr_link_peers"}}`)
	// The first id 5 is registered before the next line is read.
	h.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"herdr_link_peers"}}`)
	want := `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request: id 5 is already used by a request in flight"}}`
	if l := h.next(); l != want {
		t.Fatalf("duplicate id answered with %s", l)
	}
	// 5.0 is the same JSON number, so the same id.
	h.send(`{"jsonrpc":"2.0","id":5.0,"method":"ping"}`)
	if l := h.next(); !strings.Contains(l, `"id":5.0,"error":{"code":-32600`) {
		t.Fatalf("5.0 while 5 is in flight: %s", l)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
	h.srv.ClearFaults()
	h.quiet() // the cancelled call is not answered
	// Once cancelled, id 5 is free again.
	if out := h.call(5, "tools/call", `{"name":"herdr_link_peers"}`); !strings.Contains(out[len(out)-1], `"peers"`) {
		t.Fatalf("id 5 reused: %v", out)
	}
}

// The cancellation of a reused id reaches the call in flight under it, not
// the earlier one that already finished.
func TestCancelReachesLiveReusedID(t *testing.T) {
	h := start(t, hopt{timeout: 30 * time.Second})
	h.call(1, "initialize", `{"protocolVersion":"2025-06-18"}`)
	h.call(7, "tools/call", `{"name":"herdr_link_peers"}`)
	h.srv.SetFault(schema.MethodAgentList, sockettest.Fault{Hang: true})
	h.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"herdr_link_peers"}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	h.quiet()
	h.srv.ClearFaults()
	h.quiet()
}

// On EOF, requests already read are finished and answered before Serve
// returns: a piped initialize + tools/call gets both answers.
func TestEOFAnswersRequestsAlreadyRead(t *testing.T) {
	srv := simtest.New(t, newWorld(t))
	srv.SetFault(schema.MethodAgentList, sockettest.Fault{Latency: 50 * time.Millisecond})
	opt := mcpserver.Options{Link: mustLink(t, link.Config{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: "w1:p1"}), ShutdownGrace: 10 * time.Second}
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"herdr_link_send","arguments":{"to":"reviewer","message":"piped"}}}` + "\n")
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- mcpserver.Serve(t.Context(), in, outW, opt); outW.Close() }()
	var lines []string
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 || !strings.Contains(lines[2], `"id":2,"result"`) || !strings.Contains(lines[2], `\"status\":\"sent\"`) {
		t.Fatalf("output %q", lines)
	}
	n := 0
	for _, s := range srv.World.Prompts("w1:p2") {
		if _, ok := link.Extract(s); ok {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("reviewer got %d envelopes", n)
	}
}

// End to end, an unnamed caller: the start-up
// bootstrap and eight concurrent peers calls rename once, and every call
// reports the name Herdr has.
func TestStartupConcurrentPeersRenameOnce(t *testing.T) {
	for round := 0; round < 5; round++ {
		h := start(t, hopt{pane: "w1:p3", opts: func(o *mcpserver.Options) { o.Bootstrap = true }})
		h.srv.SetFault(schema.MethodAgentList, sockettest.Fault{Latency: 5 * time.Millisecond})
		h.call(1, "initialize", `{"protocolVersion":"2025-06-18"}`)
		h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for i := 0; i < 8; i++ {
			h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"herdr_link_peers"}}`, 10+i))
		}
		names := map[string]bool{}
		for got := 0; got < 8; {
			l := h.next()
			if m := regexp.MustCompile(`"self":\{"name":"(hl-[0-9a-f]{8})"`).FindStringSubmatch(l); m != nil {
				names[m[1]] = true
				got++
			} else if strings.Contains(l, `"result"`) {
				t.Fatalf("peers answered %s", l)
			}
		}
		renames := 0
		for _, m := range h.srv.Methods() {
			if m == schema.MethodAgentRename {
				renames++
			}
		}
		a, _ := h.world.Agent("w1:p3")
		if renames != 1 || len(names) != 1 || a.Name == nil || !names[*a.Name] {
			t.Fatalf("round %d: %d renames, names %v, herdr has %v", round, renames, names, a.Name)
		}
	}
}

// Parameter keys match exactly, as argument keys do: a key in another
// case is not the parameter (goccy, like encoding/json, would fold case),
// and tools/call names the key it does not take.
func TestParamKeysMatchExactly(t *testing.T) {
	const (
		notName = `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: tools/call takes no parameter \"NAME\" (keys match exactly: \"name\", \"arguments\", \"_meta\")"}}`
		notArgs = `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: tools/call takes no parameter \"Arguments\" (keys match exactly: \"name\", \"arguments\", \"_meta\")"}}`
	)
	tests := []struct {
		name, params, want string
	}{
		{"name in capitals", `{"NAME":"herdr_link_peers"}`, notName},
		{"name and a folded twin", `{"name":"herdr_link_peers","NAME":"herdr_link_close"}`, notName},
		{"arguments capitalised", `{"name":"herdr_link_send","Arguments":{"to":"reviewer","message":"x"}}`, notArgs},
		{"unknown key", `{"name":"herdr_link_peers","extra":1}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: tools/call takes no parameter \"extra\" (keys match exactly: \"name\", \"arguments\", \"_meta\")"}}`},
		{"_meta is a parameter", `{"name":"herdr_link_peers","_meta":{"progressToken":1}}`, `"peers"`},
		// Argument keys: a wrong-case optional key is refused, not dropped.
		{"send Reply_To", `{"name":"herdr_link_send","arguments":{"to":"reviewer","message":"x","Reply_To":"hl_a_b"}}`,
			`"INVALID_ARGUMENT: send takes only \"to\", \"message\", \"reply_to\", \"when\" and \"expect_reply\" (keys match exactly)"`},
		{"peers with an argument", `{"name":"herdr_link_peers","arguments":{"all":true}}`, `"INVALID_ARGUMENT: peers takes no arguments (keys match exactly)"`},
		{"gateway To", `{"name":"herdr_link","arguments":{"action":"send","To":"reviewer","message":"x"}}`,
			`"INVALID_ARGUMENT: herdr_link takes only \"action\", \"arguments\" and the fields of its actions (keys match exactly)"`},
		{"gateway nested Agent", `{"name":"herdr_link","arguments":{"action":"close","arguments":{"Agent":"reviewer"}}}`,
			`"INVALID_ARGUMENT: close takes only \"agent\" (keys match exactly)"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, hopt{})
			h.call(1, "initialize", `{"protocolVersion":"2025-06-18"}`)
			h.call(2, "tools/call", `{"name":"herdr_link"}`)
			out := h.call(3, "tools/call", tt.params)
			if l := out[len(out)-1]; l != tt.want && !(tt.want[0] == '"' && strings.Contains(l, tt.want)) {
				t.Fatalf("got  %s\nwant %s", l, tt.want)
			}
		})
	}
	// initialize: a protocolVersion key in another case is no protocol
	// version, so the newest revision is answered.
	h := start(t, hopt{})
	out := h.call(1, "initialize", `{"PROTOCOLVERSION":"2024-11-05"}`)
	if !strings.Contains(out[0], `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize folded the case of protocolVersion: %s", out[0])
	}
	// notifications/cancelled: REQUESTID is not requestId. The call stays
	// in flight, so its id is still taken.
	h.call(2, "tools/call", `{"name":"herdr_link"}`)
	h.srv.SetFault(schema.MethodAgentList, sockettest.Fault{Hang: true})
	h.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"herdr_link_peers"}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"REQUESTID":9}}`)
	h.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if l := h.next(); !strings.Contains(l, `"id":9,"error":{"code":-32600`) {
		t.Fatalf("a cancellation with a folded key cancelled the call: %s", l)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)
	h.quiet()
}

// A key repeated in tools/call's params is refused as an unknown key is,
// never resolved to its last occurrence: {"name":"evil","name":"…"} is
// no call of the second tool. The same holds in the arguments.
func TestRepeatedParamKeysAreRefused(t *testing.T) {
	refused := func(key string) string {
		return `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: tools/call repeats the key \"` + key + `\" (keys match exactly, each once)"}}`
	}
	tests := []struct {
		name, params, want string
	}{
		{"name twice", `{"name":"evil","name":"herdr_link_peers"}`, refused("name")},
		{"name twice, once escaped", `{"name":"evil","na\u006de":"herdr_link_peers"}`, refused("name")},
		{"arguments twice", `{"name":"herdr_link_peers","arguments":{},"arguments":{}}`, refused("arguments")},
		{"an argument twice", `{"name":"herdr_link_send","arguments":{"to":"evil","to":"reviewer","message":"x"}}`, refused("to")},
		{"a gateway's nested argument twice", `{"name":"herdr_link","arguments":{"action":"close","arguments":{"agent":"a","agent":"b"}}}`, refused("agent")},
		{"every key once", `{"name":"herdr_link_peers","arguments":{}}`, `"peers"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, hopt{})
			h.call(1, "initialize", `{"protocolVersion":"2025-06-18"}`)
			h.call(2, "tools/call", `{"name":"herdr_link"}`)
			out := h.call(3, "tools/call", tt.params)
			got := out[len(out)-1]
			if got != tt.want && !(tt.want[0] == '"' && strings.Contains(got, tt.want)) {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
