package link_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

func TestSend(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	brain, reviewer := e.link("w1:p1"), e.link("w1:p2")
	e.roundTrips()
	res, err := brain.Send(ctx, link.SendRequest{To: "reviewer", Message: "Please review\nthe diff."})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "sent" || res.To != "reviewer" || !link.ValidMessageID(res.ID) {
		t.Fatalf("send = %s to %s, id %q; want sent to reviewer with a valid id", res.Status, res.To, res.ID)
	}
	// When idle (the default): the target is looked at once under its lock,
	// its screen read once for a draft.
	if rt := strings.Join(e.roundTrips(), ","); rt != "agent.list,agent.get,pane.read,agent.prompt" {
		t.Errorf("round trips %s", rt)
	}
	in := e.w.Prompts("w1:p2")
	if len(in) == 0 {
		t.Fatal("nothing delivered")
	}
	env, ok := link.Extract(in[0])
	if !ok {
		t.Fatalf("no envelope in %q", in[0])
	}
	if diff := cmp.Diff(link.Envelope{Protocol: env.Protocol, ID: res.ID, From: "brain", To: "reviewer", Message: "Please review\nthe diff."}, env); diff != "" {
		t.Fatalf("delivered envelope mismatch (-want +got):\n%s", diff)
	}
	// The reply carries reply_to.
	// brain is working: the reply must not wait for it here.
	rep, err := reviewer.Send(ctx, link.SendRequest{To: env.From, Message: "LGTM", ReplyTo: env.ID, When: link.WhenNow})
	if err != nil {
		t.Fatal(err)
	}
	back, ok := link.Extract(e.w.Prompts("w1:p1")[0])
	if !ok || back.ReplyTo != res.ID || back.From != "reviewer" || back.ID != rep.ID {
		t.Fatalf("reply envelope %s from %s in reply to %q (found %v), want %s from reviewer in reply to %s", back.ID, back.From, back.ReplyTo, ok, rep.ID, res.ID)
	}
}

func TestPrivacyOfTargets(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	l := e.link("w1:p1")
	var texts []string
	for _, to := range []string{"ops", "nobody", "Bad Name", "brain", "w1:p2", "", strings.Repeat("a", 40)} {
		e.roundTrips()
		_, err := l.Send(ctx, link.SendRequest{To: to, Message: "hi"})
		if code(err) != link.PeerNotFound {
			t.Errorf("send to %q: %v, want PEER_NOT_FOUND", to, err)
			continue
		}
		if to == "brain" {
			// The caller's own name says so (it knows its name: no leak);
			// closing oneself is allowed, only sending to oneself is refused.
			if !strings.Contains(err.Error(), "oneself") {
				t.Errorf("send to oneself: got %q, want a text that says it is the caller's own name", err)
			}
			continue
		}
		texts = append(texts, err.Error())
		_, err = l.Close(ctx, to)
		if code(err) != link.PeerNotFound {
			t.Errorf("close %q: %v", to, err)
			continue
		}
		texts = append(texts, err.Error())
	}
	for _, tx := range texts[1:] {
		if tx != texts[0] {
			t.Errorf("PEER_NOT_FOUND texts differ: %q vs %q", tx, texts[0])
		}
	}
	// Inputs are checked before any round trip, whoever the target is.
	for _, to := range []string{"reviewer", "ops", "nobody", "Bad Name"} {
		for _, req := range []link.SendRequest{
			{To: to, Message: "  \n\t"},
			{To: to, Message: strings.Repeat("x", link.MaxMessageBytes+1)},
			// 150 KB, but over Herdr's 1 MiB request line once escaped.
			{To: to, Message: strings.Repeat("\x01", 150000)},
			{To: to, Message: strings.Repeat("\"", link.MaxMessageBytes), ReplyTo: "hl_a_b"},
			{To: to, Message: "hi", ReplyTo: "not-an-id"},
		} {
			e.roundTrips()
			_, err := l.Send(ctx, req)
			if code(err) != link.InvalidArgument {
				t.Errorf("send %q to %q: %v, want INVALID_ARGUMENT", req.Message[:min(len(req.Message), 8)], to, err)
			}
			if rt := e.roundTrips(); len(rt) != 0 {
				t.Errorf("invalid input reached Herdr: %v", rt)
			}
		}
	}
}

func TestSendFailures(t *testing.T) {
	e := setup(t, func(s *sockettest.Server) { s.SubmitDelay = time.Millisecond })
	ctx := t.Context()
	l := e.link("w1:p1")
	tests := []struct {
		to   string
		want link.Code
		text string
	}{
		{"stuck", link.SendFailed, "SEND_FAILED: the target agent is waiting at an interactive prompt; nothing was delivered"},
		{"hooked", link.SendFailed, "SEND_FAILED: the target agent is not ready to receive messages; nothing was delivered"},
		{"flaky", link.SendFailed, "SEND_FAILED: Herdr did not accept the message"},
	}
	for _, tt := range tests {
		_, err := l.Send(ctx, link.SendRequest{To: tt.to, Message: "hi", When: link.WhenNow})
		if code(err) != tt.want || err.Error() != tt.text {
			t.Errorf("send to %s: %v", tt.to, err)
		}
	}
	if len(e.w.Inputs("w1:p5")) != 0 {
		t.Error("a blocked agent received text")
	}
	// Herdr refusing with a code we do not know is still SEND_FAILED.
	e.srv.SetFault(schema.MethodAgentPrompt, sockettest.Fault{Error: &schema.ErrorBody{Code: "empty_agent_prompt", Message: "agent prompt must not be empty"}})
	if _, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "hi"}); code(err) != link.SendFailed {
		t.Errorf("empty_agent_prompt: %v", err)
	}
	e.srv.ClearFaults()
}

// hooked runs a function before each prompt or close, to change the world
// between resolution and delivery.
type hooked struct {
	link.Herdr
	before func()
}

func (h hooked) Prompt(ctx context.Context, target, text string) (link.Agent, error) {
	h.before()
	return h.Herdr.Prompt(ctx, target, text)
}

func (h hooked) ClosePane(ctx context.Context, pane string) error {
	h.before()
	return h.Herdr.ClosePane(ctx, pane)
}

func TestTargetChangesBeforeDelivery(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name   string
		change func(w *sockettest.World)
		want   link.Code
	}{
		{"target closed", func(w *sockettest.World) { _ = w.Close("w1:p2") }, link.PeerNotFound},
		{"target moved to another workspace", func(w *sockettest.World) { _, _ = w.Move("w1:p2", "w2") }, link.PeerNotFound},
		{"occupant replaced", func(w *sockettest.World) { _ = w.Detect("w1:p2", "claude") }, link.SendFailed},
		// The same agent (same terminal) renamed itself: delivered.
		{"target renamed itself", func(w *sockettest.World) { _ = w.Rename("w1:p2", "reviewer-2") }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t)
			l := e.link("w1:p1")
			l = relink(t, l, func(c *link.Config) { c.Herdr = hooked{Herdr: l.Config().Herdr, before: func() { tt.change(e.w) }} })
			res, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "hi"})
			if code(err) != tt.want {
				t.Fatalf("send: %v, want %s", err, tt.want)
			}
			if tt.want == "" {
				if res.Status != "sent" || res.Delivery == "" || len(e.w.Inputs("w1:p2")) == 0 {
					t.Fatalf("renamed target: send = %s, delivery %q, inputs %q; want sent, a delivery, some input", res.Status, res.Delivery, e.w.Inputs("w1:p2"))
				}
			}
			if tt.want == link.SendFailed && err.Error() != "SEND_FAILED: the target's pane changed occupant during delivery: the message was typed into that pane, to the agent now in it; do not resend blindly" {
				t.Fatalf("detail: %v", err)
			}
			if code(err) == link.PeerNotFound {
				for _, id := range e.w.PaneIDs() {
					if len(e.w.Inputs(id)) != 0 {
						t.Fatalf("pane %s received %q", id, e.w.Inputs(id))
					}
				}
			}
		})
	}
	t.Run("close target vanished", func(t *testing.T) {
		e := setup(t)
		l := e.link("w1:p1")
		l = relink(t, l, func(c *link.Config) {
			c.Herdr = hooked{Herdr: l.Config().Herdr, before: func() { _ = e.w.Close("w1:p2") }}
		})
		if _, err := l.Close(ctx, "reviewer"); code(err) != link.PeerNotFound {
			t.Fatalf("close: %v", err)
		}
	})
}

// slowList is a Herdr whose agent.list answer is late: after reads it,
// late runs, then the answer arrives (what it shows is then old).
type slowList struct {
	*fakeHerdr
	late func()
}

func (s slowList) ListAgents(ctx context.Context) ([]link.Agent, error) {
	a, err := s.fakeHerdr.ListAgents(ctx)
	s.late()
	return a, err
}

// A now send reads the target once more under its lock (agent.get)
// unless its own agent.list is under a few milliseconds old and no wait
// came between: another occupant that took the pane since the list is
// then not typed into. A change inside those milliseconds is caught
// after typing, from the prompt's answer.
func TestSendPinnedOccupant(t *testing.T) {
	replace := func(f *fakeHerdr) {
		f.mu.Lock()
		f.target.TerminalID, f.target.Kind = "term_9", "claude"
		f.mu.Unlock()
	}
	tests := []struct {
		name string
		// run sends through l (on f, locks lk) and returns its error.
		run       func(t *testing.T, f *fakeHerdr, lk *fakeLocker) error
		wantCode  link.Code
		wantGets  int
		wantTyped int
	}{
		{"fresh list, lock free: no re-read", func(t *testing.T, f *fakeHerdr, lk *fakeLocker) error {
			return send(t, f, lk)
		}, "", 0, 1},
		{"lock waited: re-read, nothing typed", func(t *testing.T, f *fakeHerdr, lk *fakeLocker) error {
			held, _ := lk.Lock(t.Context(), "term_2", 0) // another delivery's
			go func() {
				time.Sleep(50 * time.Millisecond)
				replace(f)
				held.Unlock()
			}()
			return send(t, f, lk)
		}, link.PeerNotFound, 1, 0},
		{"list old: re-read, nothing typed", func(t *testing.T, f *fakeHerdr, lk *fakeLocker) error {
			return send(t, slowList{f, func() { replace(f); time.Sleep(10 * time.Millisecond) }}, lk)
		}, link.PeerNotFound, 1, 0},
		{"changed within the fresh list's milliseconds: caught after typing", func(t *testing.T, f *fakeHerdr, lk *fakeLocker) error {
			return send(t, slowList{f, func() { replace(f) }}, lk)
		}, link.SendFailed, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, lk := newFake("codex", "idle"), newLocker()
				err := tt.run(t, f, lk)
				f.mu.Lock()
				gets, typed := f.gets, f.prompts
				f.mu.Unlock()
				if code(err) != tt.wantCode || gets != tt.wantGets || typed != tt.wantTyped {
					t.Fatalf("send: got %v, %d agent.get, %d typed; want %q, %d, %d", err, gets, typed, tt.wantCode, tt.wantGets, tt.wantTyped)
				}
			})
		})
	}
}

// send sends a now message to reviewer through a Link on h with locks lk.
func send(t *testing.T, h link.Herdr, lk *fakeLocker) error {
	l := mustLink(t, link.Config{Herdr: h, PaneID: "w1:p1", Locker: lk})
	_, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x", When: link.WhenNow})
	return err
}
