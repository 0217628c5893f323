package sockettest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// releaseServer starts an in-memory server speaking Herdr version v on
// the default world (no schema check: protocol 22 results are not in the
// generated protocol-20 schema). Its tests run in synctest bubbles.
func releaseServer(t *testing.T, v string) *sockettest.Server {
	t.Helper()
	s := sockettest.NewUnstartedServer(nil)
	s.Memory = true
	s.Tick = 10 * time.Millisecond
	if err := s.UseHerdr(v); err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Close() })
	return s
}

// TestHerdrReleases holds one case per socket behaviour that differs
// between Herdr 0.8.2 and 0.9.x. Each case is a property of 0.9.x: it must
// pass on the 0.9 model and fail on the 0.8.2 one (want09 false means the
// property holds on 0.8.2 only, none so far). The source of each is in the
// case's comment.
func TestHerdrReleases(t *testing.T) {
	cases := []struct {
		name string
		// holds reports whether the 0.9 property holds on s.
		holds func(t *testing.T, s *sockettest.Server) bool
	}{
		// zubo334/herdr 5e1016e4 src/app/api/agents.rs
		// handle_deferred_agent_api_request (the reply waits for the
		// submission's completion); CHANGELOG.md herdrdev/herdr 16996f3b,
		// 0.9.0 Fixed: "`agent prompt` now reliably sends the prompt and
		// Enter before reporting successful submission".
		{"prompt answers after Enter", promptAfterEnter},
		// zubo334/herdr 5e1016e4 src/app/api/agents.rs (a completion
		// error is agent_prompt_failed) and the pty_io actor's
		// pty_actor_closed "pty actor closed"; CHANGELOG 0.9.0 "Pending
		// submissions fail cleanly if the terminal exits".
		{"pending submission fails when the terminal goes", pendingFailsOnClose},
		// The pty_io actor's input_submission_timed_out "agent prompt
		// timed out before input submission", answered as `timeout`
		// (agents.rs maps ErrorKind::TimedOut); CHANGELOG 0.9.0 "Expired
		// queued submissions are rejected before typing starts" (#3187).
		{"expired queued submission refused before typing", expiredRefused},
		// Only the CHANGELOG: 0.9.0 "Recent pane reads now include output
		// that has not yet scrolled off the viewport, instead of returning
		// empty text" (#3444).
		{"recent read includes the viewport", recentIncludesViewport},
		// CHANGELOG 0.9.0 Changed: "New lifecycle event subscriptions now
		// start with live events rather than replaying retained history"
		// (#1270); 0.8.2 replays (src/api/subscriptions.rs:115-118 at
		// 1c76079f).
		{"subscription does not replay", noReplay},
		// Protocol-22 schema (zubo334/herdr 5e1016e4
		// docs/next/api/herdr-api.schema.json): method pane.link.resolve,
		// result pane_link_resolved.
		{"pane.link.resolve exists", linkResolves},
		// Protocol-22 schema ServerCapabilities: endpoint_protocol_generation,
		// health_check, surface_interest.
		{"ping reports protocol 22 capabilities", pingCaps22},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []string{"0.8.2", sockettest.NewestHerdr} {
				want := v != "0.8.2"
				synctest.Test(t, func(t *testing.T) {
					if got := tc.holds(t, releaseServer(t, v)); got != want {
						t.Errorf("Herdr %s: property holds = %v, want %v", v, got, want)
					}
				})
			}
		})
	}
}

func promptAfterEnter(t *testing.T, s *sockettest.Server) bool {
	if _, err := s.Client().AgentPrompt(t.Context(), schema.AgentPromptParams{Target: "reviewer", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	return strings.Contains(s.World.Typed("w1:p2"), "hi\n")
}

func pendingFailsOnClose(t *testing.T, s *sockettest.Server) bool {
	if err := s.World.StallInput("w1:p2", true); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := s.Client().AgentPrompt(t.Context(), schema.AgentPromptParams{Target: "reviewer", Text: "hi"})
		errc <- err
	}()
	for deadline := time.Now().Add(2 * time.Second); s.World.Queued("w1:p2") == 0 && time.Now().Before(deadline); {
		select {
		case err := <-errc: // answered without queueing (0.8.2)
			return isCode(err, "agent_prompt_failed", "pty actor closed")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := s.World.Close("w1:p2"); err != nil {
		t.Fatal(err)
	}
	return isCode(<-errc, "agent_prompt_failed", "pty actor closed")
}

func expiredRefused(t *testing.T, s *sockettest.Server) bool {
	if err := s.World.StallInput("w1:p2", true); err != nil {
		t.Fatal(err)
	}
	ms := uint64(400)
	errc := make(chan error, 1)
	go func() {
		_, err := s.Client().AgentPrompt(t.Context(), schema.AgentPromptParams{Target: "reviewer", Text: "late",
			Wait: &schema.AgentPromptWaitOptions{TimeoutMS: &ms}})
		errc <- err
	}()
	for deadline := time.Now().Add(2 * time.Second); s.World.Queued("w1:p2") == 0 && time.Now().Before(deadline); {
		select {
		case err := <-errc: // answered without queueing (0.8.2)
			return isCode(err, "timeout", "agent prompt timed out before input submission")
		case <-time.After(5 * time.Millisecond):
		}
	}
	time.Sleep(200 * time.Millisecond) // less than the Enter delay is left of the 400 ms
	if err := s.World.StallInput("w1:p2", false); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	return isCode(err, "timeout", "agent prompt timed out before input submission") && !strings.Contains(s.World.Typed("w1:p2"), "late")
}

func isCode(err error, code, msg string) bool {
	var se *socket.Error
	return errors.As(err, &se) && se.Code == code && se.Message == msg
}

func recentIncludesViewport(t *testing.T, s *sockettest.Server) bool {
	if _, err := s.World.Prompt("reviewer", "short output"); err != nil {
		t.Fatal(err)
	}
	r, err := s.Client().PaneRead(t.Context(), schema.PaneReadParams{PaneID: "w1:p2", Source: schema.ReadSourceRecent})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(r.Text, "short output")
}

func noReplay(t *testing.T, s *sockettest.Server) bool {
	if err := s.World.Close("w1:p4"); err != nil { // a retained pane_closed
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	sub, err := s.Client().Subscribe(ctx, schema.EventsSubscribeParams{Subscriptions: []schema.Subscription{{PaneClosed: &schema.SubscriptionPaneClosed{}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	got := make(chan bool, 1)
	go func() { _, err := sub.Next(ctx); got <- err == nil }()
	select {
	case replayed := <-got:
		return !replayed
	case <-time.After(150 * time.Millisecond): // 15 ticks of silence
		return true
	}
}

func linkResolves(t *testing.T, s *sockettest.Server) bool {
	if _, err := s.World.Prompt("reviewer", "see https://herdr.dev/docs now"); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Type    string `json:"type"`
		Regions []struct {
			Row, StartCol, EndCol int
		} `json:"regions"`
	}
	err := s.Client().Call(t.Context(), sockettest.MethodPaneLinkResolve, map[string]any{"pane_id": "w1:p2", "viewport_row": 0, "col": 8}, &res)
	if err != nil {
		var se *socket.Error
		if !errors.As(err, &se) || se.Code != "invalid_request" || !strings.Contains(se.Message, "unknown variant `pane.link.resolve`") {
			t.Errorf("0.8.2 refusal: %v", err)
		}
		return false
	}
	return res.Type == sockettest.ResultTypePaneLinkResolve && len(res.Regions) == 1
}

func pingCaps22(t *testing.T, s *sockettest.Server) bool {
	var raw jsonx.RawMessage
	if err := s.Client().Call(t.Context(), schema.MethodPing, nil, &raw); err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(raw), `"protocol":22`) && strings.Contains(string(raw), `"endpoint_protocol_generation":1`)
}

func TestHerdrReleaseVersions(t *testing.T) {
	for _, tc := range []struct {
		v        string
		ok, link bool
	}{{"0.8.2", true, false}, {"0.9.0", true, false}, {"0.9.1", true, true}, {"0.9.5", true, true}, {"0.10.0", true, true},
		{"0.9.1-preview.2", true, true}, {"0.8.0", false, false}, {"nine", false, false}, {"0.9", false, false}} {
		r, err := sockettest.HerdrRelease(tc.v)
		if (err == nil) != tc.ok || r.LinkResolve != tc.link || (tc.ok && r.Version != tc.v) {
			t.Errorf("HerdrRelease(%q) = version %q, link resolve %v, err %v; want ok %v, link resolve %v",
				tc.v, r.Version, r.LinkResolve, err, tc.ok, tc.link)
		}
	}
}
