package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wireStyle describes how one message is written: its top-level keys in
// order, and whether it escapes HTML characters or carries whitespace
// between tokens. Two messages of one encoder differ only in which
// members they have.
func wireStyle(msg []byte) (keys []string, htmlEscaped, spaced bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if _, err := dec.Token(); err != nil { // {
		return nil, false, false, err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, false, false, err
		}
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false, false, err
		}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, msg); err != nil {
		return nil, false, false, err
	}
	for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
		if bytes.Contains(msg, []byte(esc)) {
			htmlEscaped = true
		}
	}
	return keys, htmlEscaped, compact.Len() != len(msg), nil
}

// The shapes one encoder writes: responses, then notifications.
var wireShapes = map[string]bool{
	"jsonrpc,id,result":     true,
	"jsonrpc,id,error":      true,
	"jsonrpc,method":        true,
	"jsonrpc,method,params": true,
}

// TestOneWireStyle reads everything the server wrote in the golden
// transcripts (every message of every batch array included) and fails if
// two messages disagree in style: key order, HTML escaping or spacing.
func TestOneWireStyle(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	n, raw := 0, false
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			out, ok := strings.CutPrefix(line, "<- ")
			if !ok {
				continue
			}
			msgs := []json.RawMessage{json.RawMessage(out)}
			if strings.HasPrefix(out, "[") {
				msgs = nil
				if err := json.Unmarshal([]byte(out), &msgs); err != nil {
					t.Fatalf("%s:%d: %v", f, i+1, err)
				}
			}
			for _, m := range msgs {
				keys, esc, spaced, err := wireStyle(m)
				if err != nil {
					t.Fatalf("%s:%d: %v: %s", f, i+1, err, m)
				}
				shape := strings.Join(keys, ",")
				if !wireShapes[shape] || esc || spaced {
					t.Errorf("%s:%d: a second style on the wire (keys %s, HTML-escaped %v, spaced %v): %.200s", filepath.Base(f), i+1, shape, esc, spaced, m)
				}
				raw = raw || bytes.Contains(m, []byte("<name>"))
				n++
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d server messages in the transcripts", n)
	}
	if !raw {
		t.Error(`no transcript shows a raw "<name>": the check of HTML escaping proves nothing`)
	}
}

// The check itself tells the two styles that were once on the wire apart.
func TestWireStyleDetects(t *testing.T) {
	tests := []struct {
		msg   string
		shape string
		esc   bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"text":"<name>"}}`, "jsonrpc,id,result", false},
		{`{"id":1,"result":{"text":"\u003cname\u003e"},"jsonrpc":"2.0"}`, "id,result,jsonrpc", true},
		{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, "jsonrpc,method", false},
	}
	for _, tt := range tests {
		keys, esc, _, err := wireStyle([]byte(tt.msg))
		if err != nil || strings.Join(keys, ",") != tt.shape || esc != tt.esc {
			t.Errorf("%s: keys %v, escaped %v, %v", tt.msg, keys, esc, err)
		}
	}
}
