package sockettest_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonshape"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// recordedDir holds responses recorded from a live Herdr 0.8.2, outside
// the repository (../shared/herdr-recorded beside the repository root).
const recordedDir = "../../../shared/herdr-recorded"

func recorded(t *testing.T, name string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(recordedDir, name))
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("recordings missing: %v", err)
		}
		t.Skipf("recordings not found (%v)", err)
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			lines = append(lines, append([]byte(nil), l...))
		}
	}
	return lines
}

func sameShape(t *testing.T, what string, want, got []byte) {
	t.Helper()
	diffs, err := jsonshape.Lines(want, got)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, d := range diffs {
		t.Errorf("%s: %s\nrecorded:  %s\nsimulator: %s", what, d, want, got)
	}
}

// The simulator's ping answer has the recorded pong's shape.
func TestRecordedPong(t *testing.T) {
	want := recorded(t, "pong.json")[0]
	srv := simtest.New(t, nil)
	got := strings.TrimSpace(exchange(t, srv, []byte(`{"id":"cap-ping","method":"ping","params":{}}`+"\n")))
	sameShape(t, "pong", want, []byte(got))
}

// The simulator's errors have the recorded errors' shape and codes: a
// pane.read of an unknown pane, a request line without params.
func TestRecordedErrors(t *testing.T) {
	lines := recorded(t, "errors.ndjson")
	srv := simtest.New(t, nil)
	reqs := []string{
		`{"id":"probe","method":"pane.read","params":{"pane_id":"zz:p9","source":"recent"}}`,
		`{"id":"cap-missing","method":"pane.list"}`,
	}
	for i, req := range reqs {
		got := strings.TrimSpace(exchange(t, srv, []byte(req+"\n")))
		sameShape(t, req, lines[i], []byte(got))
		// Messages follow the recorded wording up to the values.
		var w, g schema.ErrorResponse
		_ = jsonx.Unmarshal(lines[i], &w)
		_ = jsonx.Unmarshal([]byte(got), &g)
		if w.ID != g.ID || cut(w.Error.Message) != cut(g.Error.Message) {
			t.Errorf("%s: id %q message %q, recorded id %q message %q", req, g.ID, g.Error.Message, w.ID, w.Error.Message)
		}
	}
}

// cut keeps a message's words up to the first value (a pane id, a column).
func cut(msg string) string {
	for _, stop := range []string{" zz:", " w", " column"} {
		if i := strings.Index(msg, stop); i >= 0 {
			msg = msg[:i]
		}
	}
	return msg
}

// The simulator's event lines have the recorded ones' shape: keys sorted
// at every level, pane_updated with and without agent and agent_session,
// and a status subscription's line.
func TestRecordedEvents(t *testing.T) { synctest.Test(t, testRecordedEvents) }

func testRecordedEvents(t *testing.T) {
	lines := recorded(t, "events-mixed.ndjson")
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
	 {"id":"w1:p1","cwd":"/src/a","title":"OC | task","agent":{"kind":"opencode","status":"working","session":"ses_1"}},
	 {"id":"w1:p2","cwd":"/src/b","title":"shell"},
	 {"id":"w1:p3","cwd":"/src/c","title":"OC | other","agent":{"kind":"opencode","status":"idle"}}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w, sockettest.InMemory, func(s *sockettest.Server) { s.Tick = 5 * time.Millisecond })
	sub, err := srv.Client().Subscribe(t.Context(), schema.EventsSubscribeParams{Subscriptions: []schema.Subscription{
		{PaneUpdated: &schema.SubscriptionPaneUpdated{}},
		{PaneAgentStatusChanged: &schema.SubscriptionPaneAgentStatusChanged{PaneID: "w1:p3"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	// Events in the recordings' order: an agent with a session, a status
	// change, a shell, an agent without a session.
	triggers := []func(){
		func() { _ = w.SetTitle("w1:p1", "OC | task 2") },
		func() { _ = w.SetStatus("w1:p3", "blocked") },
		func() { _ = w.SetTitle("w1:p2", "shell 2") },
		func() { _ = w.SetTitle("w1:p3", "OC | other 2") },
	}
	for i, rec := range lines {
		triggers[i]()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		ev, err := sub.Next(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := jsonx.Marshal(struct {
			Data  jsonx.RawMessage `json:"data"`
			Event string           `json:"event"`
		}{ev.Data, ev.Event})
		sameShape(t, "event "+ev.Event, rec, got)
	}
	// Every line the hub holds is sorted at every level, as Herdr writes
	// events (through a generic JSON value).
	for _, l := range w.EventLines() {
		n, err := jsonshape.Parse([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range jsonshape.Sorted(n) {
			t.Errorf("event line %s: %s", l, d)
		}
	}
}

// A world built from the recorded snapshot renders a snapshot of the same
// shape.
func TestRecordedSnapshot(t *testing.T) {
	rec := recorded(t, "snapshot.json")[0]
	var resp struct {
		Result schema.ResultSessionSnapshot `json:"result"`
	}
	if err := jsonx.Unmarshal(rec, &resp); err != nil {
		t.Fatal(err)
	}
	w, err := sockettest.NewWorld(sockettest.SpecFromSnapshot(resp.Result.Snapshot))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w)
	got := strings.TrimSpace(exchange(t, srv, []byte(`{"id":"cap-snapshot","method":"session.snapshot","params":{}}`+"\n")))
	sameShape(t, "session.snapshot", rec, []byte(got))
}

// A world mirrored from a snapshot renders that snapshot's shape, every
// optional field a live Herdr fills included (metadata an integration
// reported, a manual pane label, launch flags).
func TestMirrorRoundTrip(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w3","label":"x","tokens":{"branch":"main"},
	 "worktree":{"repo_key":"k","repo_name":"r","repo_root":"/r","checkout_path":"/r/wt","is_linked_worktree":true},"tabs":[{"id":"w3:t2","label":"docs","panes":[
	 {"id":"w3:p4","cwd":"/a","title":"✳ t","label":"notes","agent":{"kind":"claude","name":"n","status":"done","session":"s",
	  "display_title":"Fixing","display_agent":"Claude Code","state_labels":{"phase":"edit"},"tokens":{"in":"12"},"screen_detection_skipped":true}},
	 {"id":"w3:p5","agent":{"kind":"codex","name":"m","status":"blocked","launch_pending":true}},
	 {"id":"w3:p6","agent":{"kind":"pi","status":"idle","interactive_ready":true}},
	 {"id":"w3:p7"}]}]}],"focused":"w3:p5"}`))
	if err != nil {
		t.Fatal(err)
	}
	snapshot := func(w *sockettest.World) []byte {
		srv := simtest.New(t, w)
		return []byte(strings.TrimSpace(exchange(t, srv, []byte(`{"id":"s","method":"session.snapshot","params":{}}`+"\n"))))
	}
	a := snapshot(w)
	for _, want := range []string{`"title":"Fixing"`, `"display_agent":"Claude Code"`, `"state_labels":{"phase":"edit"}`, `"tokens":{"in":"12"}`,
		`"label":"notes"`, `"launch_pending":true`, `"tokens":{"branch":"main"}`,
		`"worktree":{"repo_key":"k","repo_name":"r","repo_root":"/r","checkout_path":"/r/wt","is_linked_worktree":true}`, `"interactive_ready":true`, `"focused_pane_id":"w3:p5"`} {
		if !strings.Contains(string(a), want) {
			t.Errorf("snapshot lacks %s: %s", want, a)
		}
	}
	var resp struct {
		Result schema.ResultSessionSnapshot `json:"result"`
	}
	if err := jsonx.Unmarshal(a, &resp); err != nil {
		t.Fatal(err)
	}
	m, err := sockettest.NewWorld(sockettest.SpecFromSnapshot(resp.Result.Snapshot))
	if err != nil {
		t.Fatal(err)
	}
	sameShape(t, "mirrored snapshot", a, snapshot(m))
}
