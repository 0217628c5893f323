package schemalite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/schemacheck"
	"github.com/herdr-link/herdr-link/internal/schemalite"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

func load(t *testing.T) (*schemalite.Validator, *schemacheck.Validator) {
	t.Helper()
	p, err := schemacheck.Find()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	lib, err := schemacheck.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	lite, err := schemalite.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return lite, lib
}

// corpus collects every line a simulator session writes.
func corpus(t testing.TB) [][]byte {
	var mu sync.Mutex
	var lines [][]byte
	srv := sockettest.NewUnstartedServer(nil)
	srv.Tick = 5 * time.Millisecond
	srv.Check = func(l []byte) error {
		mu.Lock()
		lines = append(lines, append([]byte(nil), l...))
		mu.Unlock()
		return nil
	}
	srv.Start()
	defer srv.Close()
	c := srv.Client()
	ctx := t.Context()
	sub, err := c.Subscribe(ctx, schema.EventsSubscribeParams{Subscriptions: []schema.Subscription{
		{PaneClosed: &schema.SubscriptionPaneClosed{}}, {PaneUpdated: &schema.SubscriptionPaneUpdated{}},
		{PaneAgentStatusChanged: &schema.SubscriptionPaneAgentStatusChanged{PaneID: "w1:p2"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	_, _ = c.AgentList(ctx)
	_, _ = c.AgentGet(ctx, "brain")
	_, _ = c.AgentGet(ctx, "nobody")
	_, _ = c.PaneList(ctx, "")
	_, _ = c.WorkspaceList(ctx)
	_, _ = c.TabList(ctx, "")
	_, _ = c.SessionSnapshot(ctx)
	_, _ = c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "reviewer", Text: "hi"})
	_, _ = c.PaneRead(ctx, schema.PaneReadParams{PaneID: "w1:p2", Source: schema.ReadSourceRecent})
	n := "renamed"
	_, _ = c.AgentRename(ctx, "w1:p3", &n)
	_ = srv.World.SetStatus("w1:p2", "working")
	_, _ = c.PaneMove(ctx, schema.PaneMoveParams{PaneID: "w1:p4", Destination: schema.PaneMoveDestination{NewWorkspace: &schema.PaneMoveDestinationNewWorkspace{}}})
	_ = c.PaneClose(ctx, "w1:p5")
	for i := 0; i < 3; i++ {
		nctx, cancel := context.WithTimeout(ctx, time.Second)
		_, _ = sub.Next(nctx)
		cancel()
	}
	// The server may still write (events, a delayed Enter): stop it first.
	srv.Close()
	mu.Lock()
	defer mu.Unlock()
	return lines
}

// mutations returns variants of a valid line that break it in typical ways.
func mutations(line []byte) [][]byte {
	var v any
	_ = json.Unmarshal(line, &v)
	var out [][]byte
	var walk func(x any, set func(any))
	walk = func(x any, set func(any)) {
		switch m := x.(type) {
		case map[string]any:
			for k, val := range m {
				k, val := k, val
				delete(m, k) // drop a property
				b, _ := json.Marshal(v)
				out = append(out, b)
				m[k] = 12345 // wrong type
				b, _ = json.Marshal(v)
				out = append(out, b)
				m[k] = "not-a-known-value"
				b, _ = json.Marshal(v)
				out = append(out, b)
				m[k] = val
				walk(val, func(nv any) { m[k] = nv })
			}
			m["unexpected_extra"] = true
			b, _ := json.Marshal(v)
			out = append(out, b)
			delete(m, "unexpected_extra")
		case []any:
			for i := range m {
				i := i
				walk(m[i], func(nv any) { m[i] = nv })
			}
		}
	}
	walk(v, func(any) {})
	return out
}

// TestAgreesWithTheLibrary: schemalite and a full JSON Schema validator give
// the same verdict on every line the simulator writes and on thousands of
// mutations of them.
func TestAgreesWithTheLibrary(t *testing.T) {
	lite, lib := load(t)
	lines := corpus(t)
	if len(lines) < 15 {
		t.Fatalf("only %d lines", len(lines))
	}
	checked, rejected := 0, 0
	for _, l := range lines {
		if err := lite.Line(l); err != nil {
			t.Errorf("schemalite rejects a simulator line: %v\n%s", err, l)
		}
		for _, m := range mutations(l) {
			e1, e2 := lite.Line(m), lib.Line(m)
			checked++
			if (e1 == nil) != (e2 == nil) {
				t.Errorf("verdicts differ on %s\nschemalite: %v\nlibrary: %v", m, e1, e2)
			}
			if e1 != nil {
				rejected++
			}
		}
	}
	t.Logf("%d lines, %d mutations compared, %d rejected by both", len(lines), checked, rejected)
}

func TestPaths(t *testing.T) {
	lite, _ := load(t)
	err := lite.Line([]byte(`{"id":"x","result":{"type":"agent_info","agent":{"terminal_id":"t","agent_status":"idle","workspace_id":"w1","tab_id":"w1:t1","focused":"yes","revision":1}}}`))
	if err == nil || !strings.Contains(err.Error(), "/result/agent") || !strings.Contains(err.Error(), "pane_id") {
		t.Fatalf("error %v", err)
	}
	for _, bad := range []string{`[]`, `nope`, `{"x":1}`, `{"id":"x","result":{}} {}`} {
		if lite.Line([]byte(bad)) == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	if _, err := schemalite.Parse([]byte(`{"schemas":{}}`)); err == nil {
		t.Error("accepted a document without schemas")
	}
}

func FuzzLine(f *testing.F) {
	p, err := schemacheck.Find()
	if err != nil {
		f.Skip(err)
	}
	lite, err := schemalite.Load(p)
	if err != nil {
		f.Fatal(err)
	}
	lib, err := schemacheck.Load(p)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"id":"x","result":{"type":"ok"}}`))
	f.Add([]byte(`{"id":"","error":{"code":"a","message":"b"}}`))
	f.Add([]byte(`{"event":"pane_closed","data":{"type":"pane_closed","pane_id":"w1:p1","workspace_id":"w1"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if !json.Valid(line) || !bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) {
			return
		}
		e1, e2 := lite.Line(line), lib.Line(line)
		if (e1 == nil) != (e2 == nil) {
			t.Fatalf("verdicts differ on %s: %v / %v", line, e1, e2)
		}
	})
}

var _ = fmt.Sprint
