package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// eachMember gives what a decode into a map gives: the same keys, exactly
// (escapes resolved, case kept), the last value of a repeated key, and
// nothing for a value that is not an object.
func FuzzEachMember(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"name":"x","arguments":{"a":[1,{"b":"}"}]}}`,
		`{"name":"a","name":"b"}`, `{"NAME":1,"name":2}`, `{"na\u006de":"x"}`,
		`{"k":"\"}\\"}`, `{"é":null,"a":true,"b":false,"c":-1.5e3}`,
		`[]`, `null`, `"x"`, `5`, `{"a" : 1 , "b" : [ ] }`, `{"\ud83d\ude00":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !jsonx.Valid(in) {
			return
		}
		var want map[string]jsonx.RawMessage
		decoded := jsonx.Unmarshal(in, &want) == nil && bytes.TrimSpace(in)[0] == '{'
		got := map[string][]byte{}
		ok := eachMember(in, func(k, v []byte) { got[string(k)] = v })
		if ok != decoded {
			t.Fatalf("%q: scanned %v, decoded %v", in, ok, decoded)
		}
		if !ok {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: scanned %d keys, decoded %d", in, len(got), len(want))
		}
		for k, w := range want {
			g, ok := got[k]
			if !ok {
				t.Fatalf("%q: key %q not scanned", in, k)
			}
			var cg, cw bytes.Buffer
			if json.Compact(&cg, g) != nil || json.Compact(&cw, w) != nil || cg.String() != cw.String() {
				t.Fatalf("%q: key %q scanned %s, decoded %s", in, k, g, w)
			}
		}
	})
}

// jsonString reads a string value as the decoder does; anything else is
// no string.
func TestJSONString(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{`"herdr_link_peers"`, "herdr_link_peers", true},
		{` "a" `, "a", true},
		{`"a\u0062"`, "ab", true},
		{`"é"`, "é", true},
		{`""`, "", true},
		{`null`, "", false},
		{`5`, "", false},
		{`["a"]`, "", false},
		{``, "", false},
	}
	for _, tt := range tests {
		got, ok := jsonString([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("jsonString(%s) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
