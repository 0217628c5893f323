package jsonshape_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonshape"
)

func TestCompare(t *testing.T) {
	tests := []struct {
		name, want, got string
		diffs           []string
	}{
		{"same shape, other values", `{"id":"a","result":{"type":"pong","n":1,"s":"x","l":[1,2]}}`, `{"id":"b","result":{"type":"pong","n":7,"s":"y","l":[3,4]}}`, nil},
		{"missing key", `{"a":1,"b":2}`, `{"a":1}`, []string{"/b: missing key (the recording has it)"}},
		{"extra key", `{"a":1}`, `{"a":1,"c":{}}`, []string{"/c: extra key (the recording does not have it)"}},
		{"key order", `{"a":1,"b":2,"c":3}`, `{"a":1,"c":3,"b":2}`, []string{"/: key order: want a,b,c, got a,c,b"}},
		{"type", `{"a":{"x":"1"}}`, `{"a":{"x":1}}`, []string{"/a/x: type: want string, got number"}},
		{"tag value", `{"result":{"type":"pong"}}`, `{"result":{"type":"ok"}}`, []string{`/result/type: value: want "pong", got "ok"`}},
		{"error code", `{"error":{"code":"pane_not_found","message":"x"}}`, `{"error":{"code":"agent_not_found","message":"y"}}`, []string{`/error/code: value: want "pane_not_found", got "agent_not_found"`}},
		{"length", `[{"a":1},{"a":2}]`, `[{"a":1}]`, []string{"/: length: want 2, got 1"}},
		{"nested in array", `[{"a":1,"b":2}]`, `[{"a":1}]`, []string{"/0/b: missing key (the recording has it)"}},
		{"escaped key", `{"a/b":1}`, `{}`, []string{"/a~1b: missing key (the recording has it)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffs, err := jsonshape.Lines([]byte(tt.want), []byte(tt.got))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range diffs {
				got = append(got, d.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.diffs, "\n") {
				t.Fatalf("diffs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.diffs, "\n"))
			}
		})
	}
}

func TestSortedAndMarshal(t *testing.T) {
	n, err := jsonshape.Parse([]byte(`{"data":{"z":1,"a":[{"b":1,"a":2}]},"event":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range jsonshape.Sorted(n) {
		got = append(got, d.String())
	}
	if strings.Join(got, "; ") != "/data: unsorted keys: want a,z, got z,a; /data/a/0: unsorted keys: want a,b, got b,a" {
		t.Fatalf("sorted: %v", got)
	}
	in := `{"b":"<&> \u001b é","a":[1.50,true,null,{}],"c":-0}`
	out := string(mustParse(t, in).Marshal())
	if out != `{"b":"<&> \u001b é","a":[1.50,true,null,{}],"c":-0}` {
		t.Fatalf("marshal: %s", out)
	}
	for _, bad := range []string{``, `{`, `{"a":1} x`, `[1,]`, strings.Repeat("[", 300) + strings.Repeat("]", 300)} {
		if _, err := jsonshape.Parse([]byte(bad)); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

func mustParse(t *testing.T, s string) *jsonshape.Node {
	t.Helper()
	n, err := jsonshape.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// FuzzParse: Parse accepts exactly what encoding/json accepts (within the
// depth bound), Marshal writes valid JSON that parses to the same shape.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{"b":null}],"c":"\u00e9"}`, `"x"`, `1e5`, `{"a":1,"a":2}`, `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := jsonshape.Parse(b)
		if err != nil {
			return
		}
		if !json.Valid(b) {
			t.Fatalf("parsed invalid JSON %q", b)
		}
		out := n.Marshal()
		if !json.Valid(out) {
			t.Fatalf("Marshal wrote invalid JSON %q from %q", out, b)
		}
		m, err := jsonshape.Parse(out)
		if err != nil {
			t.Fatal(err)
		}
		if d := jsonshape.Compare(n, m); len(d) > 0 {
			t.Fatalf("round trip changed the shape: %v", d)
		}
	})
}
