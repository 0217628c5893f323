package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"reflect"
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
				conn := jsonrpc2.NewConn(t.Context(), jsonrpc2.NewPlainObjectStream(server), h, jsonrpc2.SetLogger(discardLogger{}))
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

// libraryResult cuts what jsonrpc2 writes for a result response into the
// id and the result, and takes nothing else for one.
func TestLibraryResult(t *testing.T) {
	for _, tt := range []struct {
		id     jsonrpc2.ID
		result string
	}{
		{jsonrpc2.ID{Num: 7}, `{"tools":[]}`},
		{jsonrpc2.ID{Num: 0}, `{}`},
		{jsonrpc2.ID{Str: "#3", IsString: true}, `{"text":"a<b>&c"}`},
		{jsonrpc2.ID{Str: `a"b`, IsString: true}, `"x"`},
		{jsonrpc2.ID{Str: "", IsString: true}, `[1,{"jsonrpc":"2.0"}]`},
	} {
		raw := json.RawMessage(tt.result)
		b, err := json.Marshal(jsonrpc2.Response{ID: tt.id, Result: &raw})
		if err != nil {
			t.Fatal(err)
		}
		id, result, ok := libraryResult(b)
		if !ok || id != tt.id || string(undoHTMLEscapes(result)) != tt.result {
			t.Errorf("libraryResult(%s) = %v %s %v, want %v %s", b, id, result, ok, tt.id, tt.result)
		}
	}
	for _, b := range []string{
		`{"id":1,"error":{"code":-32600,"message":"x"},"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"id":1,"result":{},"jsonrpc":"2.0","meta":{}}`,
		`{"id":-1,"result":{},"jsonrpc":"2.0"}`,
		`{"id":"unterminated`,
	} {
		if _, _, ok := libraryResult([]byte(b)); ok {
			t.Errorf("libraryResult(%s) took it for a result response", b)
		}
	}
}

// undoHTMLEscapes gives back "<", ">" and "&" and leaves every other
// escape, an escaped backslash before "u003c" included.
func TestUndoHTMLEscapes(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`"\u003cname\u003e \u0026 co"`, `"<name> & co"`},
		{`"\\u003c"`, `"\\u003c"`},
		{`"\\\u003c"`, `"\\<"`},
		{`"\u00e9\n\u0026"`, `"\u00e9\n&"`},
		{`{"a":1}`, `{"a":1}`},
		{`"\u003`, `"\u003`},
	} {
		if got := string(undoHTMLEscapes([]byte(tt.in))); got != tt.want {
			t.Errorf("undoHTMLEscapes(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// Undoing the escapes never changes what a JSON text means, and gives
// back what encoding/json escaped.
func FuzzUndoHTMLEscapes(f *testing.F) {
	for _, s := range []string{`"<a>&"`, `{"k":"\\u003c"}`, `["\u003c",1]`, `"\\\u0026"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var want any
		if json.Unmarshal(in, &want) != nil {
			return
		}
		escaped, err := json.Marshal(json.RawMessage(in))
		if err != nil {
			return
		}
		for _, b := range [][]byte{in, escaped} {
			var got any
			if err := json.Unmarshal(undoHTMLEscapes(b), &got); err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("undoHTMLEscapes(%q) = %q: %v", b, undoHTMLEscapes(b), err)
			}
		}
	})
}
