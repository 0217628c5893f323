package link_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

var tokenRE = regexp.MustCompile(`[A-Za-z0-9_:]+`)

// leaks returns the world ids that appear as whole tokens in text.
func leaks(text string, ids map[string]bool) []string {
	var out []string
	for _, tok := range tokenRE.FindAllString(text, -1) {
		if ids[tok] || strings.HasPrefix(tok, "term_") {
			out = append(out, tok)
		}
	}
	return out
}

// TestNoIDsInModelFacingText runs every operation from every pane of the
// world, against every kind of Herdr answer, and checks that no result or
// error text contains an id of the world.
func TestNoIDsInModelFacingText(t *testing.T) {
	ctx := context.Background()
	faults := []struct {
		method string
		fault  sockettest.Fault
	}{
		{"", sockettest.Fault{}},
		{schema.MethodAgentList, sockettest.Fault{Garbage: true}},
		{schema.MethodAgentList, sockettest.Fault{Error: &schema.ErrorBody{Code: "server_unavailable", Message: "request handling failed: pane w1:p1 term_abc"}}},
		{schema.MethodAgentPrompt, sockettest.Fault{Error: &schema.ErrorBody{Code: "agent_prompt_failed", Message: "agent w1:p2 failed"}}},
		{schema.MethodPaneClose, sockettest.Fault{Error: &schema.ErrorBody{Code: "confirmation_required", Message: "pane w1:p2 in w1"}}},
		{schema.MethodPaneGet, sockettest.Fault{Error: &schema.ErrorBody{Code: "pane_not_found", Message: "pane w1:p4 not found"}}},
		{schema.MethodAgentRename, sockettest.Fault{Error: &schema.ErrorBody{Code: "agent_name_taken", Message: "agent name x is already used; candidates: terminal_id=term_1 pane_id=w1:p2 workspace_id=w1"}}},
		{schema.MethodAgentPrompt, sockettest.Fault{WrongID: true}},
		{schema.MethodPaneSplit, sockettest.Fault{Error: &schema.ErrorBody{Code: "pane_split_failed", Message: "pane w1:p1 in w1:t1"}}},
		{schema.MethodTabCreate, sockettest.Fault{DropMidResponse: true}},
		{schema.MethodAgentStart, sockettest.Fault{Error: &schema.ErrorBody{Code: "agent_pane_busy", Message: "agent target pane w1:p9 is not an available shell"}}},
		{schema.MethodAgentGet, sockettest.Fault{Error: &schema.ErrorBody{Code: "agent_not_found", Message: "agent target w1:p9 not found"}}},
	}
	targets := []string{"brain", "reviewer", "stuck", "hooked", "flaky", "writer", "ops", "nobody", "Bad", "w1:p2", "w2", "term_1", ""}
	checked := 0
	for _, f := range faults {
		e := setup(t)
		e.srv.SetFault(f.method, f.fault)
		ids := map[string]bool{}
		for _, id := range e.w.IDs() {
			ids[id] = true
		}
		for _, pane := range []string{"w1:p1", "w1:p3", "w1:p4", "w2:p1", "w9:p9"} {
			l := e.link(pane)
			var texts []string
			add := func(v any, err error) {
				if err != nil {
					texts = append(texts, err.Error())
					return
				}
				b, _ := jsonx.Marshal(v)
				// Message ids are herdr-link's own; drop them before scanning.
				texts = append(texts, regexp.MustCompile(`"id":"hl_[a-z0-9_]+"`).ReplaceAllString(string(b), ""))
			}
			sendAndWait(t, l, targets, add)
			dir := t.TempDir()
			l.Dir, l.Home, l.StartTimeout, l.StartPoll = dir, dir, 200*time.Millisecond, time.Millisecond
			for i, beside := range targets {
				for _, place := range []string{"", "tab"} {
					req := link.StartRequest{Name: "new" + strconv.Itoa(i), Kind: "claude", Beside: beside, Placement: place}
					if i%4 == 0 { // a first message on some: each costs a delivery
						req.Message = "hi"
					}
					if place == "tab" {
						req.Beside = ""
					}
					add(l.Start(ctx, req))
				}
			}
			add(l.Start(ctx, link.StartRequest{Name: "reviewer", Kind: "claude"}))
			add(l.Start(ctx, link.StartRequest{Name: "zz", Kind: "w1:p1"}))
			add(l.Start(ctx, link.StartRequest{Name: "zz", Kind: "claude", Cwd: "/w1:p1"}))
			add(l.Close(ctx, "hooked"))
			add(l.Close(ctx, "ops"))
			add(l.Close(ctx, "nobody"))
			for _, tx := range texts {
				checked++
				if l := leaks(tx, ids); len(l) > 0 {
					t.Errorf("fault %s %+v from %s: %q leaks %v", f.method, f.fault, pane, tx, l)
				}
			}
		}
	}
	t.Logf("%d model-facing texts checked", checked)
}

// sendAndWait runs the sends of the privacy property from l, with an
// outbox: held messages and requests then show in peers, and it waits on
// them, on other ids and on ids that are not ids.
func sendAndWait(t *testing.T, l *link.Link, targets []string, add func(any, error)) {
	ctx := context.Background()
	st, err := outbox.Open(t.TempDir(), "privacy")
	if err != nil {
		t.Fatal(err)
	}
	l.Outbox = st
	add(l.Peers(ctx))
	var sent []string
	for _, to := range targets {
		r, err := l.Send(ctx, link.SendRequest{To: to, Message: "hello " + to})
		add(r, err)
		sent = append(sent, r.ID)
		add(l.Send(ctx, link.SendRequest{To: to, Message: "now " + to, When: link.WhenNow}))
		add(l.Send(ctx, link.SendRequest{To: to, Message: " "}))
		add(l.Send(ctx, link.SendRequest{To: to, Message: "x", ReplyTo: "w1:p1"}))
	}
	add(l.Peers(ctx))
	for _, id := range append(sent, "hl_zz_00", "w1:p2", "term_1", "") {
		add(l.WaitReply(ctx, id, time.Millisecond, nil))
	}
}

// A notice holds the id of the message it is about and its recipient's
// name, nothing else of the world: checked over every outcome.
func TestNoticesHoldNoIDs(t *testing.T) {
	e := setup(t)
	ids := map[string]bool{}
	for _, id := range e.w.IDs() {
		ids[id] = true
	}
	for _, what := range []string{"handled", "blocked", "gone", "expired", "cancelled"} {
		text := link.NoticeText(link.Notice{Protocol: link.Protocol, Notice: what, About: "hl_mx5a_b2c3", Peer: "reviewer"})
		if l := leaks(strings.ReplaceAll(text, "hl_mx5a_b2c3", ""), ids); len(l) > 0 {
			t.Errorf("%s notice %q leaks %v", what, text, l)
		}
		got := link.ExtractNotices(text)
		if len(got) != 1 || got[0].Notice != what || len(link.ExtractAll(text)) != 0 {
			t.Errorf("%s notice %q extracts as %+v", what, text, got)
		}
		if !strings.HasPrefix(text, "\n") || !strings.HasSuffix(text, "}\n") {
			t.Errorf("%s notice %q does not stand on lines of its own", what, text)
		}
	}
}
