package herdrlink

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// The receiving end: herdr-link processes (the built binary,
// one per sender, as agent hosts run it) against the simulator's model of
// real agent TUIs.

// deliveryFlags make the processes fit the simulator's shorter Enter
// delay (50 ms instead of 300 ms) and give their calls room for the lock
// waits of eight concurrent senders.
var deliveryFlags = []string{"-timeout", "20s", "-submit-hold", "150ms", "-no-bootstrap"}

const deliveryEnterDelay = 50 * time.Millisecond

// deliveryWorld holds senders s1…s8, and the targets: an idle claude whose
// turns are short (so each delivery can get its own), a working codex
// whose turn never ends, a working claude, a stuck claude, and idle agents
// of each kind with a user's draft in their composer.
func deliveryWorld(t *testing.T) *sockettest.World {
	t.Helper()
	var panes []string
	for i := 1; i <= 8; i++ {
		panes = append(panes, fmt.Sprintf(`{"agent":{"kind":"claude","name":"s%d","status":"idle"}}`, i))
	}
	panes = append(panes,
		`{"agent":{"kind":"claude","name":"idle-claude","status":"idle","turn_ms":30,"submit_ms":30}}`,
		`{"agent":{"kind":"codex","name":"busy-codex","status":"working"}}`,
		`{"agent":{"kind":"claude","name":"busy-claude","status":"working"}}`,
		`{"agent":{"kind":"claude","name":"long-claude","status":"idle","turn_ms":20000}}`,
		`{"agent":{"kind":"claude","name":"stuck-claude","status":"idle","stuck":true}}`,
		`{"agent":{"kind":"claude","name":"draft-claude","status":"idle","draft":"half typed draft","turn_ms":30}}`,
		`{"agent":{"kind":"codex","name":"draft-codex","status":"idle","draft":"half typed draft","turn_ms":30}}`,
		`{"agent":{"kind":"opencode","name":"draft-opencode","status":"idle","draft":"half typed draft","turn_ms":30,"submit_ms":30}}`,
		`{"agent":{"kind":"pi","name":"draft-pi","status":"idle","draft":"half typed draft {","turn_ms":30}}`,
	)
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[` + strings.Join(panes, ",") + `]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func deliveryServer(t *testing.T) (*sockettest.Server, *sockettest.World) {
	w := deliveryWorld(t)
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	return srv, w
}

type sendOutcome struct {
	text     string
	isErr    bool
	id       string
	delivery string
}

// String shows an outcome as a failure message reads it.
func (r sendOutcome) String() string {
	if r.isErr {
		return fmt.Sprintf("error %q", r.text)
	}
	return fmt.Sprintf("%s %s", r.delivery, r.id)
}

// subTexts lists the submitted texts for a failure message.
func subTexts(subs []sockettest.Submission) []string {
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.Text
	}
	return out
}

// noticeLines shows notices as "notice about id from peer".
func noticeLines(ns []link.Notice) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Notice + " about " + n.About + " from " + n.Peer
	}
	return out
}

// senders starts n herdr-link processes, one per sender pane, activated.
func senders(t *testing.T, srv *sockettest.Server, w *sockettest.World, n int, flags ...string) []session {
	t.Helper()
	out := make([]session, n)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = connectArgs(t, srv, paneOf(w, fmt.Sprintf("s%d", i+1)), append(deliveryFlags, flags...))
		}()
	}
	wg.Wait()
	for _, s := range out {
		call(t, s, "herdr_link", nil)
	}
	return out
}

func send(t *testing.T, s session, to, msg string) sendOutcome {
	return sendWhen(t, s, to, msg, "")
}

// sendWhen is send with the when argument ("" leaves it out: the
// default, idle).
func sendWhen(t *testing.T, s session, to, msg, when string) sendOutcome {
	args := map[string]any{"to": to, "message": msg}
	if when != "" {
		args["when"] = when
	}
	text, isErr, sc := call(t, s, "herdr_link_send", args)
	o := sendOutcome{text: text, isErr: isErr}
	if sc != nil {
		o.id, _ = sc["id"].(string)
		o.delivery, _ = sc["delivery"].(string)
	}
	return o
}

// sendAll sends one message from each session at once, with when (""
// for the default).
func sendAll(t *testing.T, ss []session, to, when string) []sendOutcome {
	out := make([]sendOutcome, len(ss))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = sendWhen(t, s, to, fmt.Sprintf("message %d from s%d\nsecond line {\"protocol\":\"herdr-link/1\"}", i, i+1), when)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// waitSubmissions waits until pane has at least n submissions, then a
// little longer, and returns them all.
func waitSubmissions(t *testing.T, w *sockettest.World, pane string, n int) []sockettest.Submission {
	t.Helper()
	deadline := time.Now().Add(hangBound)
	for len(w.Submissions(pane)) < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(400 * time.Millisecond) // nothing more arrives
	return w.Submissions(pane)
}

// Concurrent senders in separate processes sending "now": each message is
// a turn of its own, holding exactly one intact envelope (a working codex
// is interrupted by each).
func TestConcurrentProcessesSeparateTurns(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, tc := range []struct {
		target string
		// allowed delivery values
		want map[string]bool
	}{
		{"idle-claude", map[string]bool{link.DeliverySubmitted: true, link.DeliveryQueued: true}},
		{"busy-codex", map[string]bool{link.DeliveryInterrupting: true}},
	} {
		for _, n := range []int{2, 4, 8} {
			t.Run(fmt.Sprintf("%s/%d", tc.target, n), func(t *testing.T) {
				srv, w := deliveryServer(t)
				ss := senders(t, srv, w, n)
				results := sendAll(t, ss, tc.target, "now")
				ids := map[string]int{}
				for i, r := range results {
					if r.isErr || !tc.want[r.delivery] || !link.ValidMessageID(r.id) {
						t.Fatalf("sender %d: %v, want one of %v with a valid id", i+1, r, tc.want)
					}
					ids[r.id] = i
				}
				if tc.target == "idle-claude" && !hasDelivery(results, link.DeliverySubmitted) {
					t.Errorf("sends to the idle claude: %v, want one submitted", results)
				}
				subs := waitSubmissions(t, w, paneOf(w, tc.target), n)
				if len(subs) != n {
					t.Fatalf("%d submissions for %d sends:\n%s", len(subs), n, dumpSubs(subs))
				}
				seen := map[string]bool{}
				for _, s := range subs {
					envs := link.ExtractAll(s.Text)
					if len(envs) != 1 {
						t.Fatalf("a submission holds %d envelopes:\n%s", len(envs), s.Text)
					}
					e := envs[0]
					i, ok := ids[e.ID]
					if !ok || seen[e.ID] || e.From != fmt.Sprintf("s%d", i+1) || e.Message != fmt.Sprintf("message %d from s%d\nsecond line {\"protocol\":\"herdr-link/1\"}", i, i+1) {
						t.Fatalf("envelope %s from %s with %q (known %v, seen %v), want a new id of a sender, its message", e.ID, e.From, e.Message, ok, seen[e.ID])
					}
					seen[e.ID] = true
				}
				if tc.target == "busy-codex" && w.Interrupts(paneOf(w, tc.target)) != n {
					t.Errorf("%d interrupts, want %d", w.Interrupts(paneOf(w, tc.target)), n)
				}
			})
		}
	}
}

func hasDelivery(rs []sendOutcome, d string) bool {
	for _, r := range rs {
		if r.delivery == d {
			return true
		}
	}
	return false
}

func dumpSubs(subs []sockettest.Submission) string {
	var b strings.Builder
	for _, s := range subs {
		fmt.Fprintf(&b, "--- %s\n%s\n", s.At.Format("15:04:05.000"), s.Text)
	}
	return b.String()
}

// Each delivery value arises where it should, and fast mode never waits.
func TestDeliveryValuesEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	srv, w := deliveryServer(t)
	s := senders(t, srv, w, 1)[0]
	fast := connectArgs(t, srv, paneOf(w, "s2"), append(deliveryFlags, "-delivery", "fast"))
	call(t, fast, "herdr_link", nil)
	// Bounds a loaded machine keeps: an answer "at once" comes before any
	// watch could have ended (ConfirmBase is the shortest budget; a send
	// that watched for a turn, or waited for one, takes at least that); a
	// watched one within its budget, plus as much again for the calls
	// around the watch.
	atOnce := link.ConfirmBase
	watched := link.ConfirmBudget(2000) + link.ConfirmBase
	for _, tc := range []struct {
		s      session
		to     string
		when   string
		want   string
		minDur time.Duration
		maxDur time.Duration
	}{
		{s, "idle-claude", "", link.DeliverySubmitted, deliveryEnterDelay, watched},
		{s, "idle-claude", "now", link.DeliverySubmitted, deliveryEnterDelay, watched},
		// "now" types into a working target: queued or interrupting.
		{s, "busy-claude", "now", link.DeliveryQueued, 0, atOnce},
		{s, "busy-codex", "now", link.DeliveryInterrupting, 0, atOnce},
		// The default waits for the turn's end: held, answered at once.
		{s, "busy-claude", "", link.DeliveryHeld, 0, atOnce},
		{s, "busy-codex", "idle", link.DeliveryHeld, 0, atOnce},
		{s, "stuck-claude", "", link.DeliveryNotSubmitted, link.ConfirmBudget(600) - 200*time.Millisecond, watched},
		{fast, "idle-claude", "", link.DeliveryUnconfirmed, 0, atOnce},
	} {
		start := time.Now()
		r := sendWhen(t, tc.s, tc.to, "what happened?", tc.when)
		el := time.Since(start)
		if r.isErr || r.delivery != tc.want || el < tc.minDur || el > tc.maxDur {
			t.Errorf("send to %s (when %q): %v after %v, want %s within %v..%v", tc.to, tc.when, r, el, tc.want, tc.minDur, tc.maxDur)
		}
	}
	if n := w.Interrupts(paneOf(w, "busy-codex")); n != 1 {
		t.Errorf("busy codex: %d interrupts, want 1 (the \"now\" send only)", n)
	}
	// The stuck composer still holds the text: it was typed, never sent.
	if c, _ := w.Composer(paneOf(w, "stuck-claude")); !strings.Contains(c, "what happened?") && len(link.ExtractAll(c)) != 1 {
		t.Errorf("stuck composer: %q", c)
	}
}

// Sent "now", a message is typed whatever the composer holds: a user's
// draft is merged into the delivered turn, differently per kind; the
// envelope is always found, intact.
func TestDraftNeverHidesTheEnvelope(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	srv, w := deliveryServer(t)
	s := senders(t, srv, w, 1)[0]
	for _, to := range []string{"draft-claude", "draft-codex", "draft-opencode", "draft-pi"} {
		r := sendWhen(t, s, to, "the message", "now")
		if r.isErr {
			t.Fatalf("%s: %s", to, r.text)
		}
		subs := waitSubmissions(t, w, paneOf(w, to), 1)
		if len(subs) != 1 || !strings.Contains(subs[0].Text, "half typed draft") {
			t.Fatalf("%s: submissions %q", to, subs)
		}
		envs := link.ExtractAll(subs[0].Text)
		if len(envs) != 1 || envs[0].ID != r.id || envs[0].Message != "the message" {
			t.Fatalf("%s: %d envelopes in %q, want one, %s with \"the message\"", to, len(envs), subs[0].Text, r.id)
		}
	}
}

// A prompt whose answer is lost after the request was written may have
// been delivered: never NOT_IN_HERDR; the same for close.
func TestCutOffAfterTheWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	srv, w := deliveryServer(t)
	s := connectArgs(t, srv, paneOf(w, "s1"), []string{"-timeout", "3s", "-no-bootstrap"})
	call(t, s, "herdr_link", nil)
	for _, f := range []sockettest.Fault{{DropBeforeResponse: true}, {DropMidResponse: true}, {Garbage: true}, {Hang: true}} {
		srv.SetFault("agent.prompt", f)
		r := sendWhen(t, s, "idle-claude", "maybe", "now") // typed at once, whatever the target does
		if !r.isErr || r.text != "SEND_FAILED: Herdr's answer was lost after the message was handed over: it may have been delivered; do not resend blindly" {
			t.Errorf("prompt fault %s: %v, want the may-have-been-delivered SEND_FAILED", f, r)
		}
	}
	srv.ClearFaults()
	srv.SetFault("pane.close", sockettest.Fault{DropBeforeResponse: true})
	text, isErr, _ := call(t, s, "herdr_link_close", map[string]any{"agent": "stuck-claude"})
	if !isErr || !strings.HasPrefix(text, "CLOSE_FAILED: ") || !strings.Contains(text, "may have been closed") {
		t.Errorf("close cut off: %q", text)
	}
	// Before the write (no server): NOT_IN_HERDR.
	srv.ClearFaults()
	srv.Close()
	if r := send(t, s, "idle-claude", "x"); !r.isErr || !strings.HasPrefix(r.text, "NOT_IN_HERDR: ") {
		t.Errorf("no server: %q", r.text)
	}
}

// The budget grows with the size: a 256 KiB message to an idle Codex,
// which takes about 15 s to submit it, is still confirmed.
func TestLargeMessageConfirmed(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 15 s")
	}
	srv, w := deliveryServer(t)
	s := senders(t, srv, w, 1)[0]
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	msg := strings.Repeat("review this line please\n", link.MaxMessageBytes/24)
	start := time.Now()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "herdr_link_send", Arguments: map[string]any{"to": "draft-codex", "message": msg, "when": "now"}})
	el := time.Since(start)
	if err != nil || res.IsError {
		t.Fatalf("herdr_link_send of %d bytes: %v, tool error %v; want a result", len(msg), err, res != nil && res.IsError)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, `"delivery":"submitted"`) || el < 10*time.Second || el > link.ConfirmBudget(len(msg)+1024)+2*time.Second {
		t.Fatalf("%s after %v", text, el)
	}
	subs := w.Submissions(paneOf(w, "draft-codex"))
	if len(subs) != 1 || len(link.ExtractAll(subs[0].Text)) != 1 || link.ExtractAll(subs[0].Text)[0].Message != msg {
		t.Fatalf("%d submissions", len(subs))
	}
}

// paneOf is the pane of the agent named name, or "".
func paneOf(w *sockettest.World, name string) string {
	a, ok := w.Agent(name)
	if !ok {
		return ""
	}
	return a.PaneID
}
