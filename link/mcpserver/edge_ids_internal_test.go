package mcpserver

import (
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// The connection knows a request by the client's id when jsonrpc2 holds
// it exactly, and by a synthetic one otherwise.
func TestNativeID(t *testing.T) {
	tests := []struct {
		raw    string
		native bool
		id     jsonrpc2.ID
	}{
		{`0`, true, jsonrpc2.ID{Num: 0}},
		{`7`, true, jsonrpc2.ID{Num: 7}},
		{`9223372036854775807`, true, jsonrpc2.ID{Num: 1<<63 - 1}},
		{`9223372036854775808`, false, jsonrpc2.ID{}},
		{`18446744073709551616`, false, jsonrpc2.ID{}},
		{`-1`, false, jsonrpc2.ID{}},
		{`1.0`, false, jsonrpc2.ID{}},
		{`1e3`, false, jsonrpc2.ID{}},
		{`-0.25E-7`, false, jsonrpc2.ID{}},
		{`""`, true, jsonrpc2.ID{IsString: true}},
		{`"#1"`, true, jsonrpc2.ID{Str: "#1", IsString: true}},
		{`"a b"`, true, jsonrpc2.ID{Str: "a b", IsString: true}},
		{`"\u0041"`, false, jsonrpc2.ID{}},
		{`"é"`, false, jsonrpc2.ID{}},
	}
	for _, tt := range tests {
		id, js, ok := nativeID([]byte(tt.raw))
		if ok != tt.native || id != tt.id || (ok && string(js) != tt.raw) {
			t.Errorf("nativeID(%s) = %v %s %v, want %v %v", tt.raw, id, js, ok, tt.id, tt.native)
		}
	}
}

// A cancelled request keeps its connection id until the handler retires
// it: the client's id is free at once, and a request reusing it gets
// another connection id, so the late answer of the cancelled call can
// never go out under the new request.
func TestIDTableReuseAfterCancel(t *testing.T) {
	tb := newIDTable()
	old, _, ok := tb.register([]byte(`5`), nil)
	if !ok || old != (jsonrpc2.ID{Num: 5}) {
		t.Fatalf("first 5: %v %v", old, ok)
	}
	if _, _, ok := tb.register([]byte(`5.0`), nil); ok {
		t.Fatal("5.0 accepted while 5 is in flight")
	}
	if id, _, ok := tb.drop([]byte(`5e0`)); !ok || id != old {
		t.Fatalf("cancel of 5e0 found %v %v", id, ok)
	}
	reused, js, ok := tb.register([]byte(`5`), nil)
	if !ok || reused == old || !reused.IsString || string(js) != `"`+reused.Str+`"` {
		t.Fatalf("reused 5: %v %s %v", reused, js, ok)
	}
	if p, ok := tb.retire(old); !ok || !p.dropped {
		t.Fatalf("retire(the cancelled request) = dropped %v, %v; want dropped, true", p.dropped, ok)
	}
	if p, ok := tb.retire(reused); !ok || p.dropped || string(p.raw) != `5` {
		t.Fatalf("retire(the live request) = dropped %v, raw id %s, %v; want not dropped, 5, true", p.dropped, p.raw, ok)
	}
	// A client string id equal to a synthetic id in use gets another one.
	a, _, _ := tb.register([]byte(`-1`), nil)
	b, _, ok := tb.register([]byte(`"`+a.Str+`"`), nil)
	if !ok || a == b {
		t.Fatalf("synthetic %v and client %q share an id: %v", a, a.Str, b)
	}
	if len(tb.pend) != 2 || len(tb.live) != 2 {
		t.Fatalf("table left %d pending, %d live", len(tb.pend), len(tb.live))
	}
}
