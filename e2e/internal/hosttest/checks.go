package hosttest

import (
	"slices"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/fakemodel"
)

// checkSurface checks the tool names the sender's model saw: only the
// gateway until activation; afterwards all of herdr-link's tools where the
// host refreshes (the ones it loaded, behind a tool search), else still
// only the gateway.
func (r *Result) checkSurface(a SessionResult, m Mode) {
	main := mainRequests(a.Requests)
	for _, q := range main {
		if len(q.LinkTools) == 0 {
			continue // e.g. behind a tool search, not loaded yet
		}
		if !slices.Equal(q.LinkTools, []string{fakemodel.Gateway}) {
			r.failf("sender: before activation the model saw %v, want only the gateway", q.LinkTools)
		}
		break
	}
	if len(main) == 0 {
		return
	}
	last := main[len(main)-1]
	var shown []string
	for _, t := range last.Tools {
		if t.Canonical != "" && !t.Deferred {
			shown = append(shown, t.Canonical)
		}
	}
	switch {
	case !m.ListChanged && !slices.Equal(shown, []string{fakemodel.Gateway}):
		r.failf("sender: after activation the model saw %v, want only the gateway (the mode does not refresh)", shown)
	case m.ListChanged && !a.Metrics.BehindSearch:
		for _, c := range append([]string{fakemodel.Gateway}, tier1...) {
			if !slices.Contains(shown, c) {
				r.failf("sender: after activation the model did not see %s (saw %v)", c, shown)
			}
		}
	}
}

// ids that must never reach a model: the world's pane and tab ids and any
// terminal id.
var hiddenIDs = []string{SenderPane, ReviewerPane, OtherPane, "w1:t1", "w2:t1", "term_"}

// checkSession fails the run when the session did not end cleanly or did
// not make the expected herdr-link operations successfully.
func (r *Result) checkSession(s *SessionResult, ops []string) bool {
	ok := true
	for _, q := range s.Requests {
		for _, res := range q.Results {
			for _, id := range hiddenIDs {
				if res.Action != "" && strings.Contains(res.Text, id) {
					r.failf("%s: the %s result shows the model %q", s.Name, res.Action, id)
					ok = false
				}
			}
		}
	}
	if s.Err != "" {
		r.failf("%s: %s; stderr: %s", s.Name, s.Err, lastLines(s.Outcome.Stderr, 5))
		ok = false
	}
	for _, e := range s.Errors {
		r.failf("%s: model script: %s", s.Name, e)
		ok = false
	}
	for _, op := range ops {
		res, found := firstResult(s.Requests, op)
		if !found {
			r.failf("%s: the model never received a result of %s", s.Name, op)
			ok = false
			continue
		}
		if _, seen := r.ResultBytes[op]; !seen {
			r.ResultBytes[op] = res.Bytes
		}
		if want := successMark[op]; !strings.Contains(res.Text, want) || res.IsError {
			r.failf("%s: %s failed: %.300q", s.Name, op, res.Text)
			ok = false
		}
	}
	return ok
}

// successMark is what each operation's successful result contains, however
// the host renders it (text, or structuredContent as JSON).
var successMark = map[string]string{
	"activate": `"active"`,
	"peers":    `"peers"`,
	"send":     `"sent"`,
	"close":    `"closed"`,
}

func firstResult(reqs []fakemodel.Request, action string) (fakemodel.Result, bool) {
	for _, q := range reqs {
		for _, res := range q.Results {
			if res.Action == action {
				return res, true
			}
		}
	}
	return fakemodel.Result{}, false
}

func mainRequests(reqs []fakemodel.Request) []fakemodel.Request {
	var out []fakemodel.Request
	for _, q := range reqs {
		if q.Main {
			out = append(out, q)
		}
	}
	return out
}

type delivery struct {
	text string
	env  fakemodel.Envelope
}

// delivered checks that exactly one envelope reached the agent in pane,
// from → to, with the message and reply_to: the agent's model received it
// (herdr-sim turns) and no second copy waits in its composer or queue
// (herdr-sim pane read). The sending session has ended, so everything it
// sent has been typed; only Enter may still be on its way.
func (r *Result) delivered(srv *Sim, pane, from, to, msg, replyTo string) (delivery, bool) {
	var turns []Turn
	var err error
	deadline := time.Now().Add(deliveryWait)
	for {
		turns, err = srv.Turns(pane)
		if err != nil || len(turns) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var screen string
	if err == nil {
		time.Sleep(settleWait)
		if turns, err = srv.Turns(pane); err == nil {
			screen, err = srv.Read(pane)
		}
	}
	if err != nil {
		r.failf("%s → %s: %v", from, to, err)
		return delivery{}, false
	}
	envs := envelopesIn(turns)
	typed := len(fakemodel.Envelopes(screen))
	r.Delivered[pane] = typed
	if len(envs) != 1 || typed != 1 {
		r.failf("%s → %s: %d envelope(s) reached %s's model in %d turn(s) and %d are in its pane, want exactly 1: %q", from, to, len(envs), to, len(turns), typed, screen)
		return delivery{}, false
	}
	d := envs[0]
	if e := d.env; e.From != from || e.To != to || e.Message != msg || e.ReplyTo != replyTo {
		r.failf("%s → %s: envelope %+v, want from %q to %q message %q reply_to %q", from, to, e, from, to, msg, replyTo)
		return d, false
	}
	return d, true
}

// envelopesIn finds the envelopes in what an agent received; the turn's
// text is the prompt its host's model got.
func envelopesIn(turns []Turn) []delivery {
	var out []delivery
	for _, t := range turns {
		for _, e := range fakemodel.Envelopes(t.Text) {
			out = append(out, delivery{text: t.Text, env: e})
		}
	}
	return out
}
