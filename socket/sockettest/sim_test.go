package sockettest

import (
	"bytes"
	"testing"

	"github.com/herdr-link/herdr-link/socket/sockettest/reqcheck"
)

func TestParseSimRequest(t *testing.T) {
	tests := []struct {
		line string
		ok   bool
		pane string
	}{
		{`{"id":"t","method":"sim.turns","params":{"pane_id":"w1:p2"}}`, true, "w1:p2"},
		{`{"params":{"pane_id":"x"},"method":"sim.turns","id":""}`, true, "x"},
		{`{"id":"t","method":"sim.turns","params":{}}`, false, ""},
		{`{"id":"t","method":"sim.turns"}`, false, ""},
		{`{"method":"sim.turns","params":{"pane_id":"w1:p2"}}`, false, ""},
		{`{"id":1,"method":"sim.turns","params":{"pane_id":"w1:p2"}}`, false, ""},
		{`{"id":"t","method":"sim.other","params":{"pane_id":"w1:p2"}}`, false, ""},
		{`{"id":"t","method":"pane.read","params":{"pane_id":"sim.turns"}}`, false, ""},
		{`not json "sim.`, false, ""},
	}
	for _, tt := range tests {
		r, ok := parseSimRequest([]byte(tt.line))
		if ok != tt.ok || r.PaneID != tt.pane {
			t.Errorf("parseSimRequest(%s) = pane %q, %v; want %q, %v", tt.line, r.PaneID, ok, tt.pane, tt.ok)
		}
	}
}

// FuzzParseSimRequest: the simulator-only parser never takes a request
// Herdr's parser accepts (normal methods keep Herdr's behaviour), and what
// it takes is a sim.turns request.
func FuzzParseSimRequest(f *testing.F) {
	f.Add([]byte(`{"id":"t","method":"sim.turns","params":{"pane_id":"w1:p2"}}`))
	f.Add([]byte(`{"id":"t","method":"pane.read","params":{"pane_id":"sim.turns","source":"recent"}}`))
	f.Add([]byte(`{"id":"t","method":"sim.turns","method":"ping","params":{"pane_id":"a"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimSpace(line)
		r, ok := parseSimRequest(line)
		if !ok {
			return
		}
		if r.Method != SimMethodTurns {
			t.Fatalf("took method %q", r.Method)
		}
		if req, err := reqcheck.Parse(line); err == nil {
			t.Fatalf("took %s, a %s request Herdr accepts; want only lines Herdr refuses", line, req.Method)
		}
	})
}
