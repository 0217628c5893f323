package sockettest_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// inputKinds are the receiving ends with the screen sign of a typed draft
// in their composer, and what their model gets for a delivered prompt.
var inputKinds = []struct {
	kind, draftSign string
	delivered       func(text string) string
}{
	{"claude", "❯\u00a0half typed draft", func(s string) string { return claudeTag(1, s) }},
	{"codex", "› half typed draft", nil},
	{"opencode", "half typed draft", func(s string) string { return s + " " }},
	{"pi", "────\nhalf typed draft\n────", nil},
	{"gemini", "> half typed draft", nil},
	{"qwen", "> half typed draft", nil},
	{"copilot", "> half typed draft", nil},
	{"cursor", "> half typed draft", nil}, // a plain kind
}

const envelopeText = "[herdr-link/1] Message from brain: run the tests"

// inputSession is one agent (name "a", in w1:p2) behind a simulator
// driven through its socket, as a user and a sender would.
type inputSession struct {
	t   *testing.T
	srv *sockettest.Server
	c   *socket.Client
	ctx context.Context
}

func newInputSession(t *testing.T, kind string) *inputSession {
	w := receiverWorld(t, `{"kind":"`+kind+`","name":"a","status":"idle","turn_ms":3000}`)
	srv := simtest.New(t, w, sockettest.InMemory)
	return &inputSession{t: t, srv: srv, c: srv.Client(), ctx: t.Context()}
}

func (s *inputSession) text(text string) {
	s.t.Helper()
	if err := s.c.PaneSendText(s.ctx, "w1:p2", text); err != nil {
		s.t.Fatalf("send_text: %v", err)
	}
	settle(time.Second)
}

func (s *inputSession) keys(keys ...string) {
	s.t.Helper()
	if err := s.c.PaneSendKeys(s.ctx, "w1:p2", keys...); err != nil {
		s.t.Fatalf("send_keys %q: %v", keys, err)
	}
	settle(5 * time.Second) // the kind's latency and the whole turn
}

func (s *inputSession) composer() string {
	comp, _ := s.srv.World.Composer("w1:p2")
	return comp
}

func settle(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// TestUserDraft, per kind: text typed with pane.send_text waits in the
// composer as a user's draft (the kind's screen sign) without a turn;
// Enter (pane.send_keys) submits it as one user turn holding exactly the
// draft, the agent working and then idle; a second Enter on the empty
// composer does nothing.
func TestUserDraft(t *testing.T) {
	for _, k := range inputKinds {
		t.Run(k.kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newInputSession(t, k.kind)
				a0, _ := s.srv.World.Agent("a")
				s.text("half typed draft")
				if got := s.srv.World.Read("w1:p2"); !strings.Contains(got, k.draftSign) {
					t.Fatalf("screen with a draft:\n%s\nwant %q", got, k.draftSign)
				}
				if subs := s.srv.World.Submissions("w1:p2"); len(subs) != 0 {
					t.Fatalf("typing submitted %q", texts(subs))
				}
				if err := s.c.PaneSendKeys(s.ctx, "w1:p2", "Enter"); err != nil {
					t.Fatal(err)
				}
				settle(1600 * time.Millisecond) // the slowest kind's latency (copilot 1 s, opencode 1.5 s)
				if a, _ := s.srv.World.Agent("a"); a.AgentStatus != schema.AgentStatusWorking {
					t.Fatalf("after Enter: %s", a.AgentStatus)
				}
				settle(3 * time.Second)
				a1, _ := s.srv.World.Agent("a")
				subs := texts(s.srv.World.Submissions("w1:p2"))
				want := "half typed draft"
				if k.kind == "opencode" {
					want += " " // opencode's trailing space
				}
				if len(subs) != 1 || subs[0] != want || a1.AgentStatus != schema.AgentStatusIdle || a1.StateChangeSeq != a0.StateChangeSeq+2 {
					t.Fatalf("turns %q, agent %s seq %d→%d", subs, a1.AgentStatus, a0.StateChangeSeq, a1.StateChangeSeq)
				}
				s.keys("Enter")
				if subs := s.srv.World.Submissions("w1:p2"); len(subs) != 1 {
					t.Fatalf("Enter on an empty composer submitted: %q", texts(subs))
				}
			})
		})
	}
}

// TestClearedDraft, per kind and clearing key: a cleared draft is never
// sent; Enter on the emptied composer does nothing; a prompt afterwards
// is a turn of its own holding only the prompt.
func TestClearedDraft(t *testing.T) {
	clears := []struct {
		name  string
		keys  [][]string // successive pane.send_keys calls
		kinds string     // "" every kind, else the only kind it clears in
	}{
		{"ctrl+u", [][]string{{"ctrl+u"}}, ""},
		{"ctrl+c", [][]string{{"ctrl+c"}}, ""},
		{"backspace×16", [][]string{append([]string{"bs", "ctrl+h"}, repeat("BackSpace", 14)...)}, ""},
		{"Escape Escape", [][]string{{"Escape"}, {"Escape"}}, "claude"},
	}
	for _, k := range inputKinds {
		for _, cl := range clears {
			t.Run(k.kind+"/"+cl.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					s := newInputSession(t, k.kind)
					s.text("half typed draft")
					for _, keys := range cl.keys {
						s.keys(keys...)
					}
					clears := cl.kinds == "" || cl.kinds == k.kind
					if got := s.composer(); (got == "") != clears {
						t.Fatalf("composer after %s: %q", cl.name, got)
					}
					if !clears {
						return
					}
					s.keys("Enter")
					if subs := s.srv.World.Submissions("w1:p2"); len(subs) != 0 {
						t.Fatalf("a cleared draft was sent: %q", texts(subs))
					}
					if _, err := s.c.AgentPrompt(s.ctx, schema.AgentPromptParams{Target: "a", Text: envelopeText}); err != nil {
						t.Fatal(err)
					}
					settle(5 * time.Second)
					want := envelopeText
					if k.delivered != nil {
						want = k.delivered(envelopeText)
					}
					if subs := texts(s.srv.World.Submissions("w1:p2")); len(subs) != 1 || subs[0] != want {
						t.Fatalf("turns %q, want one %q", subs, want)
					}
				})
			})
		}
	}
}

// TestEscapeKeepsDraft: one Escape clears nothing (Claude Code arms its
// clear; the others do not clear on Escape); the draft then merges with a
// delivered prompt into one turn, which is why a sender must hold it.
func TestEscapeKeepsDraft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newInputSession(t, "codex")
		s.text("half typed draft")
		s.keys("Escape")
		s.keys("Escape")
		if got := s.composer(); got != "half typed draft" {
			t.Fatalf("codex composer after Escape Escape: %q", got)
		}
		if _, err := s.c.AgentPrompt(s.ctx, schema.AgentPromptParams{Target: "a", Text: envelopeText}); err != nil {
			t.Fatal(err)
		}
		settle(5 * time.Second)
		if subs := texts(s.srv.World.Submissions("w1:p2")); len(subs) != 1 || subs[0] != "half typed draft"+envelopeText {
			t.Fatalf("turns %q", subs)
		}
	})
}

// TestCtrlUKillsOneLine: ctrl+u deletes back to the start of the line; at
// the start of a line it joins it to the one before.
func TestCtrlUKillsOneLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newInputSession(t, "claude")
		s.text("first line\nsecond")
		s.keys("ctrl+u")
		if got := s.composer(); got != "first line\n" {
			t.Fatalf("after one ctrl+u: %q", got)
		}
		s.keys("ctrl+u")
		if got := s.composer(); got != "first line" {
			t.Fatalf("after two: %q", got)
		}
		s.keys("ctrl+u")
		if got := s.composer(); got != "" {
			t.Fatalf("after three: %q", got)
		}
	})
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
