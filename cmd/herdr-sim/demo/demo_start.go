package demo

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/link"
)

// demoStartDelay is how long the demo's started agent takes to become
// ready (the simulator's managed launch).
const demoStartDelay = 300 * time.Millisecond

// brainStartsTester: brain starts tester beside itself with a first
// message; tester's model receives it as its first turn, tester's own
// herdr-link activates and replies, and the reply reaches brain.
func (d *demoRun) brainStartsTester() error {
	if d.tester != nil {
		return nil // a world with its own tester: nothing to start
	}
	ctx := d.ctx
	d.w.SetStartDelay(demoStartDelay)
	var started link.StartResult
	if err := d.brain.step(`herdr_link_start "tester" beside brain`, func() (string, error) {
		r, t, err := d.brain.tool(ctx, "herdr_link_start", map[string]any{"name": "tester", "kind": "opencode", "placement": "right",
			"message": "Run the checkout tests and tell me what fails."}, false)
		if err == nil {
			err = jsonx.Unmarshal(r.StructuredContent, &started)
		}
		return t, err
	}); err != nil {
		return err
	}
	pane := paneOf(d.w, "tester")
	if pane == "" {
		return errors.New("tester is not in the world after its start")
	}
	turn, err := waitTurn(ctx, d.w, pane, started.ID)
	if err != nil {
		return err
	}
	first, _ := link.Extract(turn)
	fmt.Fprintf(d.out, "\n  tester's model received its first turn, from %q: %q\n\n", first.From, first.Message)
	env := append(os.Environ(), d.srv.Env(pane)...)
	env = append(env, "HERDR_LINK_LOG=warn")
	c, err := mcpclient.Start(d.exe, []string{"serve", "-no-bootstrap", "-submit-hold", demoSubmitHold.String()}, env)
	if err != nil {
		return err
	}
	d.tester = &demoSession{name: "tester", c: c, out: d.out}
	if err := d.handshake(d.tester); err != nil {
		return err
	}
	before := len(d.w.Submissions(d.brainPane))
	if err := d.tester.toolStep(ctx, `herdr_link_send to "brain", reply_to`, "herdr_link_send",
		map[string]any{"to": first.From, "message": "All 42 checkout tests pass.", "reply_to": first.ID}, false); err != nil {
		return err
	}
	for len(d.w.Submissions(d.brainPane)) == before {
		select {
		case <-ctx.Done():
			return errors.New("tester's reply did not reach brain")
		case <-time.After(5 * time.Millisecond):
		}
	}
	reply, _ := link.Extract(d.w.Submissions(d.brainPane)[before].Text)
	fmt.Fprintf(d.out, "\n  brain's model received tester's reply (reply_to matches: %v): %q\n\n", reply.ReplyTo == first.ID, strings.TrimSpace(reply.Message))
	return nil
}
