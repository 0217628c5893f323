package link_test

import (
	"os"
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
	ctx := t.Context()
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
			l = relink(t, l, func(c *link.Config) {
				c.Dir, c.Home, c.StartTimeout, c.StartPoll = dir, dir, 200*time.Millisecond, time.Millisecond
			})
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
					t.Errorf("fault %s (%s) from %s: %q leaks %v, want no ids", f.method, f.fault, pane, tx, l)
				}
			}
		}
	}
	t.Logf("%d model-facing texts checked", checked)
}

// The texts a sender's model gets when a message cannot be held: a full
// target, a full outbox (by count or by bytes), no outbox or one that
// cannot be used. Each is SEND_FAILED with its own precise text, nothing
// is typed, and none names a pane, tab, workspace or terminal.
func TestHeldPathErrors(t *testing.T) {
	const (
		fullTarget = "SEND_FAILED: too many messages are already waiting for the target agent; nothing was delivered, try again after it has read them"
		full       = "SEND_FAILED: the outbox of waiting messages is full; nothing was delivered, try again later"
		noOutbox   = "SEND_FAILED: the target agent cannot take the message yet and it could not be held (the operator log says why); nothing was delivered"
	)
	tests := []struct {
		name    string
		prepare func(t *testing.T, l *link.Link) *link.Link
		before  []link.SendRequest // held first
		send    link.SendRequest
		want    string
	}{
		{name: "target full", prepare: func(_ *testing.T, l *link.Link) *link.Link { l.Config().Outbox.MaxPerTarget = 2; return l },
			before: []link.SendRequest{{To: "busy", Message: "one"}, {To: "busy", Message: "two"}},
			send:   link.SendRequest{To: "busy", Message: "three"}, want: fullTarget},
		{name: "target full, from another sender too", prepare: func(_ *testing.T, l *link.Link) *link.Link { l.Config().Outbox.MaxPerTarget = 1; return l },
			before: []link.SendRequest{{To: "coder", Message: "one"}},
			send:   link.SendRequest{To: "coder", Message: "two"}, want: fullTarget},
		{name: "store full", prepare: func(_ *testing.T, l *link.Link) *link.Link { l.Config().Outbox.MaxMessages = 2; return l },
			before: []link.SendRequest{{To: "busy", Message: "one"}, {To: "stuck", Message: "two"}},
			send:   link.SendRequest{To: "coder", Message: "three"}, want: full},
		{name: "bytes full", prepare: func(_ *testing.T, l *link.Link) *link.Link { l.Config().Outbox.MaxBytes = 2048; return l },
			before: []link.SendRequest{{To: "busy", Message: strings.Repeat("a", 1000)}},
			send:   link.SendRequest{To: "coder", Message: strings.Repeat("b", 1200)}, want: full},
		{name: "no outbox", prepare: func(t *testing.T, l *link.Link) *link.Link {
			return relink(t, l, func(c *link.Config) { c.Outbox = nil })
		},
			send: link.SendRequest{To: "busy", Message: "wait for me"}, want: noOutbox},
		{name: "outbox gone", prepare: func(t *testing.T, l *link.Link) *link.Link {
			if err := os.RemoveAll(l.Config().Outbox.Dir); err != nil {
				t.Fatal(err)
			}
			return l
		}, send: link.SendRequest{To: "busy", Message: "wait for me"}, want: noOutbox},
		{name: "outbox replaced by a file", prepare: func(t *testing.T, l *link.Link) *link.Link {
			if err := os.RemoveAll(l.Config().Outbox.Dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(l.Config().Outbox.Dir, []byte("w1:p3 term_x"), 0o600); err != nil {
				t.Fatal(err)
			}
			return l
		}, send: link.SendRequest{To: "stuck", Message: "wait for me"}, want: noOutbox},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newCourierEnv(t)
			ids := map[string]bool{}
			for _, id := range e.w.IDs() {
				ids[id] = true
			}
			brain, writer := e.link(t, "w1:p1"), e.link(t, "w1:p2")
			for i, req := range tt.before {
				if r := mustSend(t, []*link.Link{writer, brain}[i%2], req); r.Delivery != link.DeliveryHeld {
					t.Fatalf("before: send to %s = %s, want %s", req.To, r.Delivery, link.DeliveryHeld)
				}
			}
			brain = tt.prepare(t, brain)
			_, err := brain.Send(t.Context(), tt.send)
			if err == nil || err.Error() != tt.want || code(err) != link.SendFailed {
				t.Fatalf("Send = %v\nwant %s", err, tt.want)
			}
			if l := leaks(err.Error(), ids); len(l) > 0 {
				t.Errorf("%q leaks %v", err, l)
			}
			for _, p := range []string{"w1:p3", "w1:p4", "w1:p5"} {
				if in := e.w.Inputs(p); len(in) != 0 {
					t.Errorf("%s was typed into: %q", p, in)
				}
			}
		})
	}
}

// TestNoIDsInHeldPaths is TestNoIDsInModelFacingText over the paths of
// held messages: a send held (for a working, blocked or busy-locked
// target, or behind messages held before), peers with held counts, the
// errors of a full or unusable outbox, and Herdr's failures on the way
// (their messages carry ids), from several senders. Long: one world and one store serve the whole property, so every path shares its set-up.
func TestNoIDsInHeldPaths(t *testing.T) {
	ctx := t.Context()
	faults := []struct {
		method string
		fault  sockettest.Fault
	}{
		{"", sockettest.Fault{}},
		{schema.MethodAgentGet, sockettest.Fault{Error: &schema.ErrorBody{Code: "agent_not_found", Message: "agent target w1:p3 term_abc not found"}}},
		{schema.MethodAgentGet, sockettest.Fault{Error: &schema.ErrorBody{Code: "server_unavailable", Message: "pane w1:p4 in w1:t1"}}},
		{schema.MethodAgentGet, sockettest.Fault{Garbage: true}},
		{schema.MethodAgentList, sockettest.Fault{Error: &schema.ErrorBody{Code: "server_unavailable", Message: "request handling failed: pane w1:p1 term_abc"}}},
		{schema.MethodAgentRead, sockettest.Fault{Error: &schema.ErrorBody{Code: "agent_read_failed", Message: "pane w1:p6 term_q"}}},
		{schema.MethodPaneRead, sockettest.Fault{Error: &schema.ErrorBody{Code: "pane_read_failed", Message: "pane w1:p6 term_q"}}},
	}
	outboxes := []struct {
		name string
		set  func(t *testing.T, l *link.Link) *link.Link
	}{
		{"default", func(_ *testing.T, l *link.Link) *link.Link { return l }},
		{"one per target", func(_ *testing.T, l *link.Link) *link.Link { l.Config().Outbox.MaxPerTarget = 1; return l }},
		{"two in all", func(_ *testing.T, l *link.Link) *link.Link { l.Config().Outbox.MaxMessages = 2; return l }},
		{"small", func(_ *testing.T, l *link.Link) *link.Link { l.Config().Outbox.MaxBytes = 1500; return l }},
		{"none", func(t *testing.T, l *link.Link) *link.Link {
			return relink(t, l, func(c *link.Config) { c.Outbox = nil })
		}},
		{"gone", func(t *testing.T, l *link.Link) *link.Link { _ = os.RemoveAll(l.Config().Outbox.Dir); return l }},
	}
	// An idle target (each send to one is a whole delivery) from brain only.
	targets := []string{"busy", "coder", "stuck", "nobody", "w1:p3", "term_1", ""}
	checked, heldSeen := 0, 0
	for fi, f := range faults {
		for oi, ob := range outboxes {
			if fi > 0 && oi > 0 {
				continue // each fault with the default outbox, each outbox without a fault
			}
			e := newCourierEnv(t)
			e.srv.SetFault(f.method, f.fault)
			ids := map[string]bool{}
			for _, id := range e.w.IDs() {
				ids[id] = true
			}
			var texts []string
			add := func(v any, err error) {
				if err != nil {
					texts = append(texts, err.Error())
					return
				}
				if r, ok := v.(link.SendResult); ok && r.Delivery == link.DeliveryHeld {
					heldSeen++
				}
				b, _ := jsonx.Marshal(v)
				texts = append(texts, regexp.MustCompile(`"id":"hl_[a-z0-9_]+"`).ReplaceAllString(string(b), ""))
			}
			brain, writer := e.link(t, "w1:p1"), e.link(t, "w1:p2")
			brain = ob.set(t, brain)
			for _, l := range []*link.Link{brain, writer, brain} {
				for _, to := range targets {
					add(l.Send(ctx, link.SendRequest{To: to, Message: "hello " + to + strings.Repeat(".", 600)}))
				}
				add(l.Peers(ctx))
			}
			for _, to := range []string{"quick"} {
				add(brain.Send(ctx, link.SendRequest{To: to, Message: "hello " + to}))
			}
			// A target whose lock another delivery holds: held for that.
			if a, err := writer.Config().Herdr.GetAgent(ctx, "w1:p6"); err == nil {
				key := a.TerminalID
				if key == "" {
					key = "pane:" + a.PaneID
				}
				lease, err := writer.Config().Locker.Lock(ctx, key, time.Second)
				if err == nil {
					add(writer.Send(ctx, link.SendRequest{To: "quick", Message: "after the lock"}))
					lease.Unlock()
				}
			}
			add(writer.Peers(ctx))
			for _, tx := range texts {
				checked++
				if l := leaks(tx, ids); len(l) > 0 {
					t.Errorf("fault %s (%s), outbox %s: %q leaks %v, want no ids", f.method, f.fault, ob.name, tx, l)
				}
			}
		}
	}
	if heldSeen == 0 {
		t.Fatal("no send was held: the held paths were not exercised")
	}
	t.Logf("%d model-facing texts checked, %d held sends", checked, heldSeen)
}

// sendAndWait runs the sends of the privacy property from l, with an
// outbox: held messages and requests then show in peers, and it waits on
// them, on other ids and on ids that are not ids.
func sendAndWait(t *testing.T, l *link.Link, targets []string, add func(any, error)) {
	ctx := t.Context()
	st, err := outbox.Open(t.TempDir(), "privacy")
	if err != nil {
		t.Fatal(err)
	}
	l = relink(t, l, func(c *link.Config) { c.Outbox = st })
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
			t.Errorf("%s notice %q extracts as %d notices (%d envelopes), want one %s notice and no envelope", what, text, len(got), len(link.ExtractAll(text)), what)
		}
		if !strings.HasPrefix(text, "\n") || !strings.HasSuffix(text, "}\n") {
			t.Errorf("%s notice %q does not stand on lines of its own", what, text)
		}
	}
}
