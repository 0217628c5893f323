package herdrlink

import (
	"bytes"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
)

func statusEnvelope(t testing.TB, pane, status string) string {
	t.Helper()
	b, err := jsonx.Marshal(schema.EventEnvelope{Event: "pane.agent_status_changed", Data: schema.EventData{
		PaneAgentStatusChanged: &schema.EventDataPaneAgentStatusChanged{PaneID: pane, WorkspaceID: "w1", AgentStatus: schema.AgentStatus(status)}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseHookEvent(t *testing.T) {
	for _, c := range []struct {
		name, in string
		pane     string
		busy     bool
		err      string
	}{
		{"idle", statusEnvelope(t, "w1:p2", "idle"), "w1:p2", false, ""},
		{"done", statusEnvelope(t, "w1:p2", "done"), "w1:p2", false, ""},
		{"working", statusEnvelope(t, "w1:p2", "working"), "w1:p2", true, ""},
		{"blocked", statusEnvelope(t, "w1:p2", "blocked"), "w1:p2", true, ""},
		{"another event with a pane", `{"event":"pane.focused","data":{"type":"pane_focused","pane_id":"w1:p3"}}`, "w1:p3", false, ""},
		{"no pane", `{"event":"workspace.created","data":{"type":"workspace_created"}}`, "", false, "names no pane"},
		{"not json", `pane w1:p2`, "", false, "is not a Herdr event"},
		{"wrong shape", `{"data":"x"}`, "", false, "is not a Herdr event"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pane, busy, err := parseHookEvent([]byte(c.in))
			if pane != c.pane || busy != c.busy || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Errorf("got %q, %v, %v; want %q, %v, error containing %q", pane, busy, err, c.pane, c.busy, c.err)
			}
		})
	}
}

func FuzzParseHookEvent(f *testing.F) {
	f.Add(statusEnvelope(f, "w1:p2", "idle"))
	f.Add(`{"event":"x","data":{"pane_id":""}}`)
	f.Add(`{`)
	f.Fuzz(func(t *testing.T, in string) {
		pane, busy, err := parseHookEvent([]byte(in))
		if err != nil && (pane != "" || busy) {
			t.Errorf("error %v with pane %q, busy %v", err, pane, busy)
		}
		if err == nil && pane == "" {
			t.Errorf("no error and no pane for %q", in)
		}
	})
}

// Misuse and events that leave nothing to do end at once, before any
// socket or outbox is looked at (no HERDR_SOCKET_PATH is needed).
func TestDeliverUsage(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  deliverConfig
		env  map[string]string
		code int
		want string
	}{
		{"no event, no flag", deliverConfig{}, nil, 2, "pass -pane ID or -all"},
		{"both flags", deliverConfig{pane: "w1:p1", all: true}, nil, 2, "exclude each other"},
		{"bad event", deliverConfig{}, map[string]string{envPluginEventJSON: "{"}, 2, "is not a Herdr event"},
		{"agent became busy", deliverConfig{}, map[string]string{envPluginEventJSON: statusEnvelope(t, "w1:p1", "working")}, 0, ""},
		{"bad log level", deliverConfig{level: "loud", all: true}, nil, 2, "log level"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.cfg.level == "" {
				c.cfg.level = "info"
			}
			var stderr bytes.Buffer
			code := runDeliver(&c.cfg, func(k string) string { return c.env[k] }, &stderr)
			if code != c.code || !strings.Contains(stderr.String(), c.want) || (c.want == "" && stderr.Len() > 0) {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr containing %q", code, stderr.String(), c.code, c.want)
			}
		})
	}
}
