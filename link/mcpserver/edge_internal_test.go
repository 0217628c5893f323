package mcpserver

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/sourcegraph/jsonrpc2"
)

// What the stream's edge does and why: jsonrpc2 on its own (its plain
// stream, one JSON value after another) with an echo handler. A line it
// cannot take ends the connection, so the requests after it are never
// read; ids it cannot hold come back changed; a repeated key in params
// reaches the handler as its last occurrence. The edge (edge.go) answers,
// translates and refuses these itself.
func TestJSONRPC2AloneNeedsTheEdge(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // the first output line; "" when the connection closed without one
	}{
		{"parse error", `this is not json`, ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, ""},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, ""},
		{"id past 2^63", `{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}`, ""},
		{"negative id", `{"jsonrpc":"2.0","id":-1,"method":"ping"}`, `{"id":18446744073709551615,"result":{},"jsonrpc":"2.0"}`},
		{"exponent id", `{"jsonrpc":"2.0","id":1e0,"method":"ping"}`, ""},
		{"html in a result", `{"jsonrpc":"2.0","id":2,"method":"html"}`, `{"id":2,"result":"\u003cname\u003e","jsonrpc":"2.0"}`},
		{"repeated key", `{"jsonrpc":"2.0","id":3,"method":"params","params":{"name":"evil","name":"peers"}}`, `{"id":3,"result":{"name":"peers"},"jsonrpc":"2.0"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				client, server := net.Pipe()
				h := jsonrpc2.HandlerWithError(func(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
					switch req.Method {
					case "html":
						return "<name>", nil
					case "params":
						return req.Params, nil
					}
					return struct{}{}, nil
				})
				conn := jsonrpc2.NewConn(context.Background(), jsonrpc2.NewPlainObjectStream(server), h, jsonrpc2.SetLogger(discardLogger{}))
				go func() {
					_, _ = io.WriteString(client, tt.in+"\n"+`{"jsonrpc":"2.0","id":99,"method":"ping"}`+"\n")
				}()
				sc := bufio.NewScanner(client)
				sc.Split(bufio.ScanLines)
				got := ""
				if sc.Scan() {
					got = strings.TrimSpace(sc.Text())
				}
				if got != tt.want {
					t.Fatalf("jsonrpc2 alone answered %q, want %q", got, tt.want)
				}
				if tt.want == "" {
					<-conn.DisconnectNotify() // and the ping after it is never answered
				}
				_ = conn.Close()
				client.Close()
			})
		})
	}
}
