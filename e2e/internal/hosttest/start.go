package hosttest

import (
	"fmt"
	"strings"

	"github.com/herdr-link/herdr-link/e2e/internal/fakemodel"
)

// StartedPane is the pane herdr_link_start opens in the scenario's world:
// a split to the right of the sender, the workspace's third pane.
const StartedPane = "w1:p3"

// StartMessage is the first message the starter gives the agent it starts.
const StartMessage = "Run the checkout tests and report what fails (hosttest %s)."

// start: the sender, in a session of its own, starts "tester" (of its
// own host's kind) beside itself with a first message; the tester's model
// receives exactly that envelope.
func (sc *scenario) start() {
	r := sc.r
	msg := fmt.Sprintf(StartMessage, sc.tag)
	s := runSession(sc.ctx, sc.h, sc.m, sc.cfg, sc.srv, "starter", SenderPane, sc.tag,
		"Use Herdr Link: start an agent named tester beside you and ask it to run the checkout tests.",
		fakemodel.Script{Steps: []fakemodel.Step{
			{Call: fakemodel.Gateway},
			{Call: fakemodel.StartTool, Args: map[string]any{"name": "tester", "kind": sc.h.Kind, "message": msg}},
			{Text: "Started tester."},
		}})
	r.Sessions = append(r.Sessions, s)
	if !r.checkSession(&s, []string{"activate", "start"}) {
		return
	}
	if res, ok := firstResult(s.Requests, "start"); ok && !strings.Contains(res.Text, `"tester"`) {
		r.failf("starter: the start result does not name tester: %.200q", res.Text)
	}
	r.delivered(sc.srv, StartedPane, "brain", "tester", msg, "")
}
