package schemalite_test

// The helpers of internal/schemalite's own tests (schemalite_test.go
// there), copied: this differential test compares schemalite with two JSON
// Schema libraries, and lives in the e2e module so that the root module
// does not require google/jsonschema-go for it.

import (
	"context"
	"encoding/json"
	"os"
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
