//go:build unix

package tui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/fakemodel"
	"github.com/herdr-link/herdr-link/e2e/internal/tui"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
)

// TestWorkingCodexFinishesFirst: a message sent (when idle, the default)
// to a real Codex in the middle of a slowly streamed answer is held; Codex
// finishes that answer (read whole, not steered away) and then gets the
// message as its next turn, with the envelope whole.
func TestWorkingCodexFinishesFirst(t *testing.T) {
	srv, ps := liveWorld(t, []liveSpec{{h: tui.Codex, id: reviewerPane, name: "reviewer", warm: true}, {id: "w1:p2", name: "brain"}})
	cx := ps[reviewerPane]
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	brain := sender(t, srv, "brain")
	begin := time.Now()
	cx.tap.SetDelay(busyDelay)
	const busy = "Start a long task (working Codex)."
	if _, err := srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: "reviewer", Text: busy}); err != nil {
		t.Fatal(err)
	}
	if !waitUntil(ctx, 20*time.Second, func() bool {
		ts := cx.tap.Turns()
		return cx.status() == schema.AgentStatusWorking && len(ts) > 0 && contains(ts[len(ts)-1].New, busy) && ts[len(ts)-1].End.IsZero()
	}) {
		dump(t, srv, begin, cx)
		t.Fatal("Codex never showed working on its long answer")
	}
	cx.tap.SetDelay(answerDelay)
	s := sendTo(t, ctx, brain, "reviewer", "Please review the parser when you are done.")
	t.Logf("send: delivery %q, %v after the long turn started", s.delivery, time.Since(begin).Round(time.Millisecond))
	if err := cx.tap.Wait(ctx, func(ts []tui.Turn) bool {
		in := turnsWith(ts, s.id)
		return len(in) > 0 && !ts[in[0]].End.IsZero()
	}); err != nil {
		dump(t, srv, begin, cx)
		t.Fatalf("the message never reached Codex's model: %v", err)
	}
	ts := cx.tap.Turns()
	bi, mi := turnsWith(ts, busy), turnsWith(ts, s.id)
	b, m := ts[bi[0]], ts[mi[0]]
	var bad []string
	if s.delivery != "held" {
		bad = append(bad, fmt.Sprintf("delivery %q, want held", s.delivery))
	}
	if !b.Completed || b.Cut {
		bad = append(bad, fmt.Sprintf("the running answer was not read whole (completed=%v cut=%v): Codex was interrupted", b.Completed, b.Cut))
	}
	if m.Start.Before(b.End) {
		bad = append(bad, fmt.Sprintf("the message's turn started %v before the running answer ended", b.End.Sub(m.Start).Round(time.Millisecond)))
	}
	if mi[0] != bi[0]+1 || len(mi) != 1 {
		bad = append(bad, fmt.Sprintf("the message is in turns %v, want only the one after the long turn (%d)", mi, bi[0]))
	}
	if contains(b.New, s.id) || !extracts(strings.Join(m.New, ""), s.id) {
		bad = append(bad, "the message's envelope is not whole in its own turn")
	}
	t.Logf("long turn %v–%v, message turn from %v (%v after the long answer ended); status %s",
		b.Start.Sub(begin).Round(time.Millisecond), b.End.Sub(begin).Round(time.Millisecond), m.Start.Sub(begin).Round(time.Millisecond),
		m.Start.Sub(b.End).Round(time.Millisecond), cx.history(begin))
	if len(bad) > 0 {
		dump(t, srv, begin, cx)
		t.Fatal(strings.Join(bad, "; "))
	}
}

// TestClaudeDraftThenMessage: a real Claude Code holding a draft its user
// is typing (raw keys, pane.send_text a key at a time) gets a message
// sent when idle (the default) only after the user sends the draft
// (Enter, pane.send_keys): the user's turn is the draft alone, the
// message comes as its own next turn. Long: one scenario on two real
// TUIs, read top to bottom as the user and the sender act.
func TestClaudeDraftThenMessage(t *testing.T) {
	srv, ps := liveWorld(t, []liveSpec{{h: tui.Claude, id: reviewerPane, name: "reviewer", warm: true}, {id: "w1:p2", name: "brain"}})
	cl := ps[reviewerPane]
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	brain := sender(t, srv, "brain")
	// The user's turn lasts a second or two, as a real model's does: the
	// message must wait for its end, not only for the composer to empty.
	cl.tap.SetDelay(answerDelay)
	begin := time.Now()
	const draft = "half typed draft"
	for _, k := range draft {
		if err := srv.Client().PaneSendText(ctx, reviewerPane, string(k)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond) // a user's typing
	}
	if err := cl.pane.WaitScreen(ctx, func(s string) bool { return strings.Contains(s, "draft") }); err != nil {
		t.Fatalf("draft not in the composer: %v; screen:\n%s", err, cl.pane.Screen(false, false))
	}
	draftScreen := cl.pane.Screen(false, false)
	s := sendTo(t, ctx, brain, "reviewer", "Please review the parser.")
	sentAt := time.Now()
	t.Logf("send: delivery %q", s.delivery)
	// The user reads it over before sending: meanwhile herdr-link's
	// courier looks at the composer again (a pane.read of the pane after
	// the send) and must keep holding the message.
	// (Or until the message shows up in a turn: then the checks below
	// say what went wrong.)
	if !waitUntil(ctx, 10*time.Second, func() bool {
		return screenReads(srv, reviewerPane, sentAt) >= 1 || len(turnsWith(cl.tap.Turns(), s.id)) > 0
	}) {
		t.Fatalf("herdr-link never looked at the composer again after the send (pane.read of %s)", reviewerPane)
	}
	if err := srv.Client().PaneSendKeys(ctx, reviewerPane, "Enter"); err != nil {
		t.Fatal(err)
	}
	pressed := time.Now()
	if err := cl.tap.Wait(ctx, func(ts []tui.Turn) bool {
		in := turnsWith(ts, s.id)
		return len(in) > 0 && !ts[in[0]].End.IsZero()
	}); err != nil {
		dump(t, srv, begin, cl)
		t.Fatalf("the message never reached Claude Code's model: %v", err)
	}
	ts := cl.tap.Turns()
	ui, mi := turnsWith(ts, draft), turnsWith(ts, s.id)
	var bad []string
	if s.delivery != "held" {
		bad = append(bad, fmt.Sprintf("delivery %q, want held", s.delivery))
	}
	switch {
	case len(ui) == 0:
		bad = append(bad, "no turn holds the user's draft")
	default:
		u, m := ts[ui[0]], ts[mi[0]]
		if len(link.ExtractAll(strings.Join(u.New, ""))) > 0 || contains(u.New, s.id) {
			bad = append(bad, "the user's turn holds the message's envelope (merged into the draft)")
		}
		if u.Start.Before(pressed) {
			bad = append(bad, "the draft was submitted before the user's Enter")
		}
		if len(ui) != 1 || len(mi) != 1 || mi[0] != ui[0]+1 {
			bad = append(bad, fmt.Sprintf("the draft is in turns %v and the message in %v, want the message alone in the next", ui, mi))
		}
		if m.Start.Before(u.End) {
			bad = append(bad, "the message's turn started before the user's turn ended")
		}
		if !extracts(strings.Join(m.New, ""), s.id) {
			bad = append(bad, "the message's envelope is not whole in its turn")
		}
		// herdr-link's paste shows in the composer only once the user's
		// turn is over (typed into a working Claude Code, it would be
		// queued: not what "idle" promises).
		if at, ok := cl.firstComposer("draft", pressed); ok && at.Before(u.End) {
			bad = append(bad, fmt.Sprintf("the message was pasted %v before the user's turn ended", u.End.Sub(at).Round(time.Millisecond)))
		}
		t.Logf("user's turn's input %q; message turn's input %q", u.New, abbreviate(m.New))
		t.Logf("user's turn %v–%v after Enter, message turn from %v (%v after the user's answer ended); status %s",
			u.Start.Sub(pressed).Round(time.Millisecond), u.End.Sub(pressed).Round(time.Millisecond), m.Start.Sub(pressed).Round(time.Millisecond),
			m.Start.Sub(u.End).Round(time.Millisecond), cl.history(begin))
	}
	if len(bad) > 0 {
		t.Logf("screen with the draft:\n%s", draftScreen)
		dump(t, srv, begin, cl)
		t.Fatal(strings.Join(bad, "; "))
	}
}

// TestCodexHandledNoticeToClaude: a real Claude Code, whose herdr-link
// MCP server is the real binary, sends a request to a real Codex; Codex
// finishes its turn with it without replying; the "handled" notice is
// typed into the Claude Code TUI and reaches its model as a user turn.
// Long: one scenario on two real TUIs, read top to bottom.
func TestCodexHandledNoticeToClaude(t *testing.T) {
	var linkArgs []string
	if os.Getenv(turnsFlipEnv) == "no-notices" {
		linkArgs = append(linkArgs, "-no-notices")
	}
	const ask = "Please look at the parser."
	script := fakemodel.Script{Steps: []fakemodel.Step{
		{Call: fakemodel.Gateway},
		{Call: fakemodel.Send, Args: map[string]any{"to": "reviewer", "message": ask}},
	}, FinalText: "Asked the reviewer."}
	srv, ps := liveWorld(t, []liveSpec{
		{h: tui.Claude, id: "w1:p2", name: "brain", script: script, link: true, linkArgs: linkArgs},
		{h: tui.Codex, id: reviewerPane, name: "reviewer", warm: true},
	})
	cl, cx := ps["w1:p2"], ps[reviewerPane]
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	// Turns of a second or two, as a real model's: "handled" must wait
	// for the end of Codex's turn, the notice for Claude Code's.
	cl.tap.SetDelay(answerDelay)
	cx.tap.SetDelay(answerDelay)
	begin := time.Now()
	if _, err := srv.Client().AgentPrompt(ctx, schema.AgentPromptParams{Target: "brain", Text: "Ask the reviewer to look at the parser."}); err != nil {
		t.Fatal(err)
	}
	// The request's id, from the send's result Claude Code gave its model.
	var id, delivery string
	if !waitUntil(ctx, 60*time.Second, func() bool {
		for _, q := range cl.fake.Requests() {
			for _, r := range q.Results {
				var out struct {
					ID       string `json:"id"`
					Delivery string `json:"delivery"`
				}
				if r.Action == "send" && json.Unmarshal([]byte(r.Text), &out) == nil && out.ID != "" {
					id, delivery = out.ID, out.Delivery
					return true
				}
			}
		}
		return false
	}) {
		dump(t, srv, begin, cl, cx)
		t.Fatalf("Claude Code's model never got a send result; fake errors %v", cl.fake.Errors())
	}
	sentAt := time.Now()
	t.Logf("Claude Code sent %s (delivery %q)", id, delivery)
	if err := cx.tap.Wait(ctx, func(ts []tui.Turn) bool {
		in := turnsWith(ts, id)
		return len(in) > 0 && !ts[in[0]].End.IsZero()
	}); err != nil {
		dump(t, srv, begin, cl, cx)
		t.Fatalf("the request never reached Codex's model: %v", err)
	}
	handledAt := cx.tap.Turns()[turnsWith(cx.tap.Turns(), id)[0]].End
	nctx, ncancel := context.WithTimeout(ctx, 15*time.Second)
	defer ncancel()
	err := cl.tap.Wait(nctx, func(ts []tui.Turn) bool {
		in := turnsWith(ts, `"notice":"handled"`)
		return len(in) > 0 && !ts[in[0]].End.IsZero()
	})
	if err != nil {
		dump(t, srv, begin, cl, cx)
		t.Fatalf("no notice turn in Claude Code %v after Codex's turn ended: %v", time.Since(handledAt).Round(time.Millisecond), err)
	}
	ts := cl.tap.Turns()
	in := turnsWith(ts, `"notice":"handled"`)
	n := ts[in[0]]
	var bad []string
	ns := link.ExtractNotices(strings.Join(n.New, ""))
	if len(ns) != 1 || ns[0].About != id || ns[0].Peer != "reviewer" || ns[0].Notice != "handled" {
		var got []string
		for _, n := range ns {
			got = append(got, n.Notice+" about "+n.About+" from "+n.Peer)
		}
		bad = append(bad, fmt.Sprintf("the notice turn holds %q, want one handled notice about %s from reviewer", got, id))
	}
	if len(in) != 1 {
		bad = append(bad, fmt.Sprintf("notice in turns %v, want one", in))
	}
	if !slicesAny(cl.fake.Requests(), func(q fakemodel.Request) bool { return q.Main && strings.Contains(q.LastUser, `"about":"`+id+`"`) }) {
		bad = append(bad, "the fake model's log has no request whose last user message holds the notice")
	}
	t.Logf("notice turn's input: %q", n.New)
	t.Logf("notice turn started %v after Codex's turn ended (%v after the send)", n.Start.Sub(handledAt).Round(time.Millisecond), n.Start.Sub(sentAt).Round(time.Millisecond))
	if len(bad) > 0 {
		dump(t, srv, begin, cl, cx)
		t.Fatal(strings.Join(bad, "; "))
	}
}
