package link_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// The world of the unsubmitted-text tests: a sender, a Pi whose own
// integration reports its state, and a Claude Code.
const composerWorld = `{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
 {"id":"w1:p1","agent":{"kind":"claude","name":"brain","status":"idle"}},
 {"id":"w1:p2","agent":{"kind":"pi","name":"pi","status":"idle","turn_ms":40,"submit_ms":10}},
 {"id":"w1:p3","agent":{"kind":"claude","name":"quick","status":"idle","turn_ms":40,"submit_ms":10}},
 {"id":"w1:p4","agent":{"kind":"codex","name":"coder","status":"idle","turn_ms":40,"submit_ms":10}},
 {"id":"w1:p5","agent":{"kind":"gemini","name":"gem","status":"idle","turn_ms":40,"submit_ms":10}}
]}]}]}`

func newComposerEnv(t *testing.T) courierEnv {
	t.Helper()
	w, err := sockettest.ParseWorld([]byte(composerWorld))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w, sockettest.InMemory, func(s *sockettest.Server) { s.SubmitDelay = 20 * time.Millisecond })
	return courierEnv{srv: srv, w: w, box: t.TempDir(), lock: privateDir(t)}
}

// piReports makes Pi's integration (a full-lifecycle source) report st.
func piReports(t *testing.T, e courierEnv, st schema.PaneAgentState) {
	t.Helper()
	if err := e.srv.Client().PaneReportAgent(t.Context(), schema.PaneReportAgentParams{PaneID: "w1:p2", Source: "herdr:pi", Agent: "pi", State: st}); err != nil {
		t.Fatal(err)
	}
}

// dialogUnderIdleReport puts the simulated Pi in front of a dialog
// (screen detection: blocked) while its integration still reports idle,
// which is what Herdr shows: an Enter goes to the dialog, and typed text
// stays in the composer.
func dialogUnderIdleReport(t *testing.T, e courierEnv) {
	t.Helper()
	piReports(t, e, schema.PaneAgentStateIdle)
	if err := e.w.SetStatus("w1:p2", "blocked"); err != nil {
		t.Fatal(err)
	}
	if a, err := e.srv.Client().AgentGet(t.Context(), "w1:p2"); err != nil || a.AgentStatus != schema.AgentStatusIdle {
		t.Fatalf("Herdr shows %s, %v; want idle", a.AgentStatus, err)
	}
}

// A delivery whose Enter did not submit it (its text still shows in the
// target's composer after the watch) is reported not_submitted, never
// submitted or unconfirmed, for when:"now" and for a send to an idle
// target alike; a request so typed ends not_submitted at once (the send's
// answer told its sender: no notice), and nothing is typed again.
func TestUnsubmittedSend(t *testing.T) {
	for name, when := range map[string]link.When{"now": link.WhenNow, "idle": link.WhenIdle} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newComposerEnv(t)
				brain := e.ledgerLink(t, "w1:p1")
				run(t, brain)
				dialogUnderIdleReport(t, e)
				r := mustSend(t, brain, link.SendRequest{To: "pi", Message: "are you there?", When: when})
				if r.Delivery != link.DeliveryNotSubmitted {
					t.Fatalf("delivery %q, want %q", r.Delivery, link.DeliveryNotSubmitted)
				}
				w, err := brain.WaitReply(t.Context(), r.ID, 5*time.Second, nil)
				if err != nil || w.State != outbox.OutcomeNotSubmitted {
					t.Fatalf("wait = %s, %v; want %s", w.State, err, outbox.OutcomeNotSubmitted)
				}
				time.Sleep(2 * time.Second)
				if n := notices(e, "w1:p1"); len(n) != 0 {
					t.Errorf("%d notices (first %s), want none (the send's answer said it)", len(n), n[0].Notice)
				}
				if got := strings.Count(e.w.Typed("w1:p2"), `"id":"`+r.ID+`"`); got != 1 {
					t.Errorf("typed %d times, want once", got)
				}
				if subs := e.w.Submissions("w1:p2"); len(subs) != 0 {
					t.Errorf("%d submissions (first %q), want none", len(subs), subs[0].Text)
				}
			})
		})
	}
}

// A held message typed by the courier whose text stayed in the target's
// composer is not called delivered: it ends not_submitted, is never typed
// again, and its sender gets a notice saying so; a request ends
// not_submitted (not handled) with that notice.
func TestUnsubmittedHeld(t *testing.T) {
	for _, tc := range []struct {
		name    string
		request bool
	}{{"request", true}, {"message", false}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newComposerEnv(t)
				brain := e.ledgerLink(t, "w1:p1")
				run(t, brain)
				piReports(t, e, schema.PaneAgentStateWorking)
				expect := tc.request
				r := mustSend(t, brain, link.SendRequest{To: "pi", Message: "when you are free", ExpectReply: &expect})
				if r.Delivery != "held" {
					t.Fatalf("delivery %q, want held", r.Delivery)
				}
				dialogUnderIdleReport(t, e)
				eventually(t, "typed", func() bool { return strings.Contains(e.w.Typed("w1:p2"), r.ID) })
				eventually(t, "a notice turn", func() bool { return len(notices(e, "w1:p1")) == 1 })
				n := notices(e, "w1:p1")[0]
				if diff := cmp.Diff(link.Notice{Protocol: link.Protocol, Notice: "not_submitted", About: r.ID, Peer: "pi"}, n); diff != "" {
					t.Errorf("notice mismatch (-want +got):\n%s", diff)
				}
				if tc.request {
					w, err := brain.WaitReply(t.Context(), r.ID, time.Second, nil)
					if err != nil || w.State != outbox.OutcomeNotSubmitted {
						t.Errorf("wait = %s, %v; want %s", w.State, err, outbox.OutcomeNotSubmitted)
					}
				}
				if got := held(t, brain, "pi"); got != 0 {
					t.Errorf("held %d, want 0", got)
				}
				time.Sleep(5 * time.Second)
				if got := strings.Count(e.w.Typed("w1:p2"), `"id":"`+r.ID+`"`); got != 1 {
					t.Errorf("typed %d times, want once", got)
				}
				if got := len(notices(e, "w1:p1")); got != 1 {
					t.Errorf("%d notices, want 1", got)
				}
			})
		})
	}
}

// Deliveries that submit are untouched by the check; one whose Enter is
// lost (a stuck composer) shows the text unsent: not_submitted for a kind
// whose composer can be read, unconfirmed ("cannot tell") for one whose
// cannot.
func TestComposerCheckByKind(t *testing.T) {
	for _, tc := range []struct {
		to, pane string
		stuck    bool
		want     string
	}{
		{"quick", "w1:p3", false, link.DeliverySubmitted},
		{"quick", "w1:p3", true, link.DeliveryNotSubmitted},
		{"coder", "w1:p4", false, link.DeliverySubmitted},
		{"coder", "w1:p4", true, link.DeliveryNotSubmitted},
		{"gem", "w1:p5", false, link.DeliverySubmitted},
		{"gem", "w1:p5", true, link.DeliveryUnconfirmed},
	} {
		t.Run(fmt.Sprintf("%s/stuck=%v", tc.to, tc.stuck), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newComposerEnv(t)
				brain := e.ledgerLink(t, "w1:p1")
				if err := e.w.SetBehaviour(tc.pane, sockettest.Behaviour{Stuck: tc.stuck, TurnTime: 40 * time.Millisecond}); err != nil {
					t.Fatal(err)
				}
				r := mustSend(t, brain, link.SendRequest{To: tc.to, Message: "hello", When: link.WhenNow})
				if r.Delivery != tc.want {
					t.Errorf("delivery %q, want %q", r.Delivery, tc.want)
				}
			})
		})
	}
}
