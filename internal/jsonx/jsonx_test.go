package jsonx_test

import (
	"encoding/json"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

type probe struct {
	ID     string          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	N      *int64          `json:"n"`
	L      []string        `json:"l"`
}

// FuzzAgainstEncodingJSON: goccy/go-json (behind jsonx) and encoding/json
// agree on what parses and on the decoded value, for the shapes herdr-link
// decodes, and jsonx never panics.
func FuzzAgainstEncodingJSON(f *testing.F) {
	f.Add([]byte(`{"id":"a","method":"ping","params":{},"n":1,"l":["x"]}`))
	f.Add([]byte(`{"ID":"case","METHOD":"x"}`))
	f.Add([]byte(`{"id":"\u00e9\ud83d\ude00","params":[1,{"a":null}]}`))
	f.Add([]byte(`{"n":1e3}`))
	f.Add([]byte(`[1,2`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var a, g probe
		errStd := json.Unmarshal(b, &a)
		errX := jsonx.Unmarshal(b, &g)
		if (errStd == nil) != (errX == nil) {
			if json.Valid(b) && errStd == nil {
				t.Fatalf("encoding/json accepts %q, jsonx: %v", b, errX)
			}
			return // jsonx may reject (or accept) what is not valid JSON
		}
		if errStd != nil {
			return
		}
		ja, _ := json.Marshal(a)
		jg, _ := json.Marshal(g)
		if string(ja) != string(jg) {
			t.Fatalf("%q decodes differently:\nencoding/json %s\njsonx         %s", b, ja, jg)
		}
		if jsonx.Valid(b) != json.Valid(b) {
			t.Fatalf("Valid(%q) differs", b)
		}
	})
}

func TestMarshalNoHTMLEscape(t *testing.T) {
	b, err := jsonx.Marshal(map[string]string{"m": "<a&b>"})
	if err != nil || string(b) != `{"m":"<a&b>"}` {
		t.Fatalf("%s %v", b, err)
	}
}
