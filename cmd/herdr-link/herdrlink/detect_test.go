package herdrlink

import (
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

func TestDetectHost(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
	 {"id":"w1:p1","agent":{"kind":"codex","status":"idle"}},
	 {"id":"w1:p2","agent":{"kind":"claude","name":"brain","status":"idle"}},
	 {"id":"w1:p3","agent":{"kind":"gemini","status":"idle"}},
	 {"id":"w1:p4"},
	 {"id":"w1:p5","agent":{"kind":"crush","status":"idle"}}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w)
	tests := []struct{ pane, host, err string }{
		{"w1:p1", "codex", ""},
		{"w1:p2", "claude", ""},
		{"w1:p3", "", "config generic"},
		{"w1:p4", "", "no agent detected"},
		{"w1:p5", "crush", ""},
	}
	for _, tt := range tests {
		env := map[string]string{}
		for _, kv := range srv.Env(tt.pane) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		h, err := detectHost(func(k string) string { return env[k] })
		if h != tt.host || (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: %q, %v; want %q, %q", tt.pane, h, err, tt.host, tt.err)
		}
	}
	if _, err := detectHost(func(string) string { return "" }); err == nil {
		t.Error("detected a host outside Herdr")
	}
}
