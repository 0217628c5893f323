package sockettest_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// hubSince returns the event kinds emitted after the first n, and the
// lines.
func hubSince(w *sockettest.World, n int) ([]string, []string) {
	lines := w.EventLines()[n:]
	kinds := make([]string, len(lines))
	for i, l := range lines {
		var env struct{ Event string }
		_ = jsonx.Unmarshal([]byte(l), &env)
		kinds[i] = env.Event
	}
	return kinds, lines
}

// The events Herdr emits for detection, exit, moves,
// closes and title changes.
func TestLifecycleEvents(t *testing.T) { synctest.Test(t, testLifecycleEvents) }

func testLifecycleEvents(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) { s.Tick = 5 * time.Millisecond })
	w := srv.World
	c := srv.Client()
	ctx := t.Context()
	check := func(name string, do func(), want string, contains ...string) {
		t.Helper()
		n := len(w.EventLines())
		do()
		kinds, lines := hubSince(w, n)
		if strings.Join(kinds, " ") != want {
			t.Errorf("%s: events %v, want %s", name, kinds, want)
		}
		all := strings.Join(lines, "\n")
		for _, c := range contains {
			if !strings.Contains(all, c) {
				t.Errorf("%s: events lack %s:\n%s", name, c, all)
			}
		}
	}
	check("detect", func() { _ = w.Detect("w1:p3", "codex") }, "pane_agent_detected",
		`{"data":{"agent":"codex","pane_id":"w1:p3","type":"pane_agent_detected","workspace_id":"w1"},"event":"pane_agent_detected"}`)
	check("exit of a named agent", func() { _ = w.Exit("w1:p1") }, "pane_agent_detected pane_updated pane_agent_status_changed",
		`"final_status":"working"`, `"released":true`)
	check("title", func() { _ = w.SetTitle("w1:p2", "⠋ pi: thinking") }, "pane_updated",
		`"terminal_title":"⠋ pi: thinking"`, `"terminal_title_stripped":"pi: thinking"`)
	check("same title", func() { _ = w.SetTitle("w1:p2", "⠋ pi: thinking") }, "")
	check("move out of a shared tab", func() {
		var r schema.ResultPaneMove
		if err := c.Call(ctx, schema.MethodPaneMove, schema.PaneMoveParams{PaneID: "w1:p2",
			Destination: schema.PaneMoveDestination{Tab: &schema.PaneMoveDestinationTab{TabID: "w2:t1", Split: schema.SplitDirectionRight}}}, &r); err != nil {
			t.Fatal(err)
		}
	}, "pane_moved layout_updated layout_updated", `"tab_id":"w1:t1"`, `"tab_id":"w2:t1"`)
	check("move the last pane of a workspace to a new one", func() {
		_ = w.Close("w2:p2")
		_ = w.Close("w2:p3")
		var r schema.ResultPaneMove
		if err := c.Call(ctx, schema.MethodPaneMove, schema.PaneMoveParams{PaneID: "w2:p1",
			Destination: schema.PaneMoveDestination{NewWorkspace: &schema.PaneMoveDestinationNewWorkspace{}}}, &r); err != nil {
			t.Fatal(err)
		}
		if r.MoveResult.ClosedWorkspaceID == nil || r.MoveResult.CreatedWorkspace == nil || r.MoveResult.CreatedTab == nil {
			t.Errorf("move result: closed workspace %v, created workspace %v, created tab %v; want all three",
				r.MoveResult.ClosedWorkspaceID != nil, r.MoveResult.CreatedWorkspace != nil, r.MoveResult.CreatedTab != nil)
		}
	}, "pane_closed layout_updated pane_closed layout_updated tab_closed workspace_closed workspace_created tab_created pane_moved layout_updated",
		`{"data":{"type":"workspace_closed","workspace_id":"w2"},"event":"workspace_closed"}`)
	check("close the last pane of a workspace", func() { _ = w.Close("w3:p1") }, "pane_closed workspace_closed",
		`"workspace":{"active_tab_id":"w3:t1","agent_status":"idle","focused":false,"label":"w3","number":2,"pane_count":1,"tab_count":1,"workspace_id":"w3"}`)
	// A subscriber meets pane_agent_detected.
	sub, err := c.Subscribe(ctx, schema.EventsSubscribeParams{Subscriptions: []schema.Subscription{{PaneAgentDetected: &schema.SubscriptionPaneAgentDetected{}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	nctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if ev, err := sub.Next(nctx); err != nil || ev.Event != "pane_agent_detected" {
		t.Fatalf("subscription: %v %v", ev, err)
	}
}

// The fields a live Herdr fills reach clients.
func TestLiveFields(t *testing.T) { synctest.Test(t, testLiveFields) }

func testLiveFields(t *testing.T) {
	srv := simtest.New(t, nil, sockettest.InMemory)
	raw := func(method string, params any) string {
		var r jsonx.RawMessage
		if err := srv.Client().Call(t.Context(), method, params, &r); err != nil {
			t.Fatal(err)
		}
		return string(r)
	}
	brain := raw(schema.MethodAgentGet, schema.AgentTarget{Target: "brain"})
	writer := raw(schema.MethodAgentGet, schema.AgentTarget{Target: "writer"})
	pane := raw(schema.MethodPaneGet, schema.PaneTarget{PaneID: "w1:p1"})
	for what, want := range map[string][]string{
		brain: {`"terminal_title":"✳ Refactor the session store"`, `"terminal_title_stripped":"Refactor the session store"`,
			`"agent_session":{"source":"herdr:claude","agent":"claude","kind":"id","value":"7d0c2a4e-51b3-4f0e-9a6d-0c1e2f3a4b5c"}`,
			`"foreground_cwd":"/home/dev/app"`},
		writer: {`"screen_detection_skipped":true`},
		pane:   {`"foreground_cwd"`, `"terminal_title"`, `"agent_session"`, `"scroll":{"offset_from_bottom":0,"max_offset_from_bottom":0,"viewport_rows":40}`},
	} {
		for _, w := range want {
			if !strings.Contains(what, w) {
				t.Errorf("%s lacks %s", what, w)
			}
		}
	}
	if strings.Contains(brain, "screen_detection_skipped") {
		t.Errorf("screen_detection_skipped written while false: %s", brain)
	}
}

// A byte sent after a waiting request, even in
// the same write, abandons the wait silently, as Herdr's byte-by-byte read
// leaves it for the disconnect check.
func TestStrayByteAbandonsWait(t *testing.T) { synctest.Test(t, testStrayByteAbandonsWait) }

func testStrayByteAbandonsWait(t *testing.T) {
	srv := simtest.New(t, newWorld(t), sockettest.InMemory, func(s *sockettest.Server) { s.Tick = 10 * time.Millisecond })
	for name, line := range map[string]string{
		"agent.wait":          `{"id":"w","method":"agent.wait","params":{"target":"brain","timeout_ms":1500}}`,
		"agent.prompt + wait": `{"id":"p","method":"agent.prompt","params":{"target":"w1:p2","text":"hi","wait":{"timeout_ms":1500}}}`,
	} {
		bubbleStep(t, name, func(t *testing.T) {
			start := time.Now()
			if got := exchange(t, srv, []byte(line+"\nX")); got != "" {
				t.Fatalf("reply %q, want none (the wait is abandoned)", got)
			}
			if d := time.Since(start); d > time.Second {
				t.Fatalf("the wait ran %v; the stray byte should end it at once", d)
			}
		})
	}
	// The prompt itself was written before the wait began.
	if in := srv.World.Prompts("w1:p2"); len(in) == 0 || in[0] != "hi" {
		t.Fatalf("prompts %q", in)
	}
	// A subscription gets its acknowledgement, then the stream ends.
	got := exchange(t, srv, []byte(`{"id":"s","method":"events.subscribe","params":{"subscriptions":[{"type":"pane.closed"}]}}`+"\nX"))
	if got != `{"id":"s","result":{"type":"subscription_started"}}`+"\n" {
		t.Fatalf("subscription with a stray byte: %q", got)
	}
	// An ordinary request does not look at the rest of the connection.
	if got := exchange(t, srv, []byte(`{"id":"g","method":"agent.get","params":{"target":"brain"}}`+"\nX")); !strings.Contains(got, `"agent_info"`) {
		t.Fatalf("agent.get with a stray byte: %q", got)
	}
}

// Herdr answers every ordinary request of a
// client that half-closed its write side after the request line.
func TestHalfClosedClientsGetReplies(t *testing.T) {
	for _, poll := range []bool{false, true} {
		t.Run(fmt.Sprintf("in memory, poll read %v", poll), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				halfClosed(t, simtest.New(t, nil, sockettest.InMemory, func(s *sockettest.Server) { s.PollRead = poll }))
			})
		})
	}
	for _, poll := range []bool{false, true} {
		t.Run(fmt.Sprintf("poll read %v", poll), func(t *testing.T) {
			halfClosed(t, simtest.New(t, nil, func(s *sockettest.Server) { s.PollRead = poll }))
		})
	}
}

func halfClosed(t *testing.T, srv *sockettest.Server) {
	lines := []string{
		`{"id":"1","method":"ping","params":{}}`,
		`{"id":"2","method":"agent.get","params":{"target":"brain"}}`,
		`{"id":"3","method":"agent.list","params":{}}`,
		`{"id":"4","method":"pane.get","params":{"pane_id":"w1:p4"}}`,
		`{"id":"5","method":"pane.list","params":{}}`,
		`{"id":"6","method":"session.snapshot","params":{}}`,
		`{"id":"7","method":"agent.get","params":{"target":"nobody"}}`,
		`{"id":"8","method":"bogus","params":{}}`,
		`{"id":"9","method":"agent.prompt","params":{"target":"reviewer","text":"x"}}`,
	}
	const n = 300
	var wg sync.WaitGroup
	missing := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(line string) {
			defer wg.Done()
			c, err := srv.Dial()
			if err != nil {
				missing <- err.Error()
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			_, _ = c.Write([]byte(line + "\n"))
			_ = closeWrite(c)
			out, _ := io.ReadAll(c)
			if !strings.HasSuffix(string(out), "}\n") {
				missing <- line
			}
		}(lines[i%len(lines)])
	}
	wg.Wait()
	close(missing)
	var lost []string
	for m := range missing {
		lost = append(lost, m)
	}
	if len(lost) > 0 {
		t.Fatalf("%d of %d half-closed requests got no reply, e.g. %s", len(lost), n, lost[0])
	}
}
