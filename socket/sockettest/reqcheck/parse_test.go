package reqcheck_test

import (
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/reqcheck"
)

// FuzzParseRequest: the fast path never accepts a line the exact (serde)
// path rejects, and agrees with it on what it accepts.
func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"id":"1","method":"agent.get","params":{"target":"brain"}}`))
	f.Add([]byte(`{"id":"1","method":"ping","params":{}}`))
	f.Add([]byte(`{"ID":"1","method":"ping","params":{}}`))
	f.Add([]byte(`{"id":"1","method":"agent.rename","params":{"target":"a","name":null}}`))
	f.Add([]byte(`{"id":"1","method":"agent.wait","params":{"target":"a","until":["idle","bogus"],"timeout_ms":-1}}`))
	f.Add([]byte(`{"id":"1","method":"events.subscribe","params":{"subscriptions":[{"type":"pane.agent_status_changed","agent_status":"x"}]}}`))
	f.Add([]byte(`{"id":"1","method":"pane.move","params":{"pane_id":"w1:p1","destination":{"type":"tab","tab_id":"w1:t1","split":"up"}}}`))
	f.Add([]byte(`{"id":"1","method":"pane.send_keys","params":{"pane_id":"w1:p1","keys":["Enter","ctrl+u"]}}`))
	f.Add([]byte(`{"id":"1","method":"pane.send_input","params":{"pane_id":"w1:p1"}}`))
	f.Add([]byte(`{"id":"1","method":"pane.report_agent","params":{"pane_id":"w1:p1","source":"s","agent":"a","state":"done","seq":null}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		reqcheck.CheckParsers(t, line)
	})
}

// The params checker knows every string enum reachable from the params of
// the methods the simulator implements, and its idea of required fields
// matches the schema's.
func TestParamsCheckerCoversSchema(t *testing.T) {
	if missing := reqcheck.UnlistedEnums(sockettest.Implemented()); len(missing) > 0 {
		t.Fatalf("enums without values in the params checker: %v", missing)
	}
	for _, m := range sockettest.Implemented() {
		got, want := reqcheck.RequiredFields(m), schema.RequiredParams(m)
		if strings.Join(sortedCopy(got), ",") != strings.Join(sortedCopy(want), ",") {
			t.Errorf("%s: checker requires %v, schema %v", m, got, want)
		}
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
