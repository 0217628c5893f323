//go:build unix

package herdrlink

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/google/go-cmp/cmp"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// Requests that get answered, as processes: herdr-link servers (the built
// binary, one per pane) against the simulator's receiving end. The reply
// grace is shortened to reqGrace (-reply-grace) so that a handled request
// ends within a second of its recipient's turn.

const reqGrace = 500 * time.Millisecond

// reqFlags fit the simulator's 50 ms Enter delay (as deliveryFlags do)
// and shorten the reply grace.
var reqFlags = []string{"-timeout", "5s", "-submit-hold", "150ms", "-no-bootstrap", "-reply-grace", reqGrace.String()}

// reqWorld holds the senders s1…s3; quick-1…quick-4, whose turns end by
// themselves after 200 ms; and answerer, slow, closer, whose turns never
// end by themselves, and held-closer, working (a message to it is held).
func reqWorld(t *testing.T) *sockettest.World {
	t.Helper()
	var panes []string
	for i := 1; i <= 3; i++ {
		panes = append(panes, fmt.Sprintf(`{"agent":{"kind":"claude","name":"s%d","status":"idle","turn_ms":200,"submit_ms":30}}`, i))
	}
	for i := 1; i <= 4; i++ {
		panes = append(panes, fmt.Sprintf(`{"agent":{"kind":"claude","name":"quick-%d","status":"idle","turn_ms":200,"submit_ms":30}}`, i))
	}
	for _, n := range []string{"answerer", "slow", "closer"} {
		panes = append(panes, fmt.Sprintf(`{"agent":{"kind":"claude","name":%q,"status":"idle","turn_ms":-1,"submit_ms":30}}`, n))
	}
	panes = append(panes, `{"agent":{"kind":"claude","name":"held-closer","status":"working","turn_ms":-1}}`)
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[` + strings.Join(panes, ",") + `]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func reqServer(t *testing.T) (*sockettest.Server, *sockettest.World) {
	w := reqWorld(t)
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
	freshStore(t, srv)
	return srv, w
}

// freshStore empties the outbox of srv's socket before any server of it
// starts: the simulator's terminal ids are the same in every run, so a
// store an earlier simulator of the same socket identity left (held
// messages, requests, notices) would be served to this one's agents, and
// the counts of these tests assume none.
func freshStore(t *testing.T, srv *sockettest.Server) {
	t.Helper()
	st, err := reqStore(srv)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(st.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		_ = os.Remove(filepath.Join(st.Dir, e.Name()))
	}
}

// pane is the pane of the agent named name (the test fails without one).
func pane(t *testing.T, w *sockettest.World, name string) string {
	t.Helper()
	a, ok := w.Agent(name)
	if !ok {
		t.Fatalf("no agent %s", name)
	}
	return a.PaneID
}

// reqSession is an activated herdr-link server of the agent named name.
func reqSession(t *testing.T, srv *sockettest.Server, w *sockettest.World, name string, flags ...string) session {
	t.Helper()
	s := connectArgs(t, srv, pane(t, w, name), append(slices.Clone(reqFlags), flags...))
	call(t, s, "herdr_link", nil)
	return s
}

// request sends a request and returns its id.
func request(t *testing.T, s session, to, msg string) (id, delivery string) {
	t.Helper()
	text, isErr, sc := call(t, s, "herdr_link_send", map[string]any{"to": to, "message": msg})
	if isErr || sc["id"] == nil {
		t.Fatalf("send to %s: %s", to, text)
	}
	return sc["id"].(string), fmt.Sprint(sc["delivery"])
}

// waitState calls herdr_link_wait and returns the state.
func waitState(t *testing.T, s session, id string, secs float64) string {
	t.Helper()
	text, isErr, sc := call(t, s, "herdr_link_wait", map[string]any{"id": id, "timeout_s": secs})
	if isErr || sc["id"] != id {
		t.Fatalf("wait %s: %s", id, text)
	}
	return fmt.Sprint(sc["state"])
}

// noticesOf returns the notices in pane's turns, and how many turns held
// at least one.
func noticesOf(w *sockettest.World, pane string) (ns []link.Notice, turns int) {
	for _, s := range w.Submissions(pane) {
		got := link.ExtractNotices(s.Text)
		if len(got) > 0 {
			turns++
		}
		ns = append(ns, got...)
	}
	return ns, turns
}

// typedIDs counts the envelopes in pane's turns by id.
func typedIDs(w *sockettest.World, pane string) map[string]int {
	out := map[string]int{}
	for _, s := range w.Submissions(pane) {
		for _, e := range link.ExtractAll(s.Text) {
			out[e.ID]++
		}
	}
	return out
}

// A request the recipient answers through its own herdr-link server ends
// replied: wait says so, the sender's peers stop listing it, and no
// notice ever comes; the reply is the sender's turn, intact.
func TestRequestRepliedAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Parallel()
	srv, w := reqServer(t)
	s1 := reqSession(t, srv, w, "s1")
	id, d := request(t, s1, "answerer", "what is 2+2?")
	if d != "submitted" {
		t.Fatalf("delivery %s", d)
	}
	ap := pane(t, w, "answerer")
	if !until(hangBound, func() bool { return typedIDs(w, ap)[id] == 1 }) {
		t.Fatalf("turns %q, want %s typed once", subTexts(w.Submissions(ap)), id)
	}
	if _, _, sc := call(t, s1, "herdr_link_peers", nil); !strings.Contains(fmt.Sprint(sc["peers"]), "awaiting_reply:["+id+"]") {
		t.Errorf("peers while awaited: %v", sc["peers"])
	}
	answerer := reqSession(t, srv, w, "answerer")
	text, isErr, _ := call(t, answerer, "herdr_link_send", map[string]any{"to": "s1", "message": "4", "reply_to": id})
	if isErr {
		t.Fatalf("reply: %s", text)
	}
	if st := waitState(t, s1, id, 50); st != outbox.OutcomeReplied {
		t.Fatalf("wait: %s", st)
	}
	// The recipient's turn ends after its reply: past the grace, still no
	// notice.
	if err := w.SetStatus(ap, "idle"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(reqGrace + time.Second)
	p1 := pane(t, w, "s1")
	if ns, _ := noticesOf(w, p1); len(ns) != 0 {
		t.Fatalf("notices %q for a replied request, want none", noticeLines(ns))
	}
	subs := w.Submissions(p1)
	if len(subs) != 1 {
		t.Fatalf("sender's turns %q, want only the reply", subTexts(subs))
	}
	if envs := link.ExtractAll(subs[0].Text); len(envs) != 1 || envs[0].ReplyTo != id || envs[0].From != "answerer" || envs[0].Message != "4" {
		t.Fatalf("sender's turn: %q", subs[0].Text)
	}
	if _, _, sc := call(t, s1, "herdr_link_peers", nil); strings.Contains(fmt.Sprint(sc["peers"]), "awaiting_reply") {
		t.Errorf("peers after the reply: %v", sc["peers"])
	}
}

// A request whose recipient's turn ends without a reply: exactly one
// notice turn in the sender's pane, no sooner than the grace after the
// send (the courier finds a typed request at its next scan, seconds
// later); wait says handled.
func TestRequestHandledOneNoticeTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Parallel()
	srv, w := reqServer(t)
	s1 := reqSession(t, srv, w, "s1")
	qp, p1 := pane(t, w, "quick-1"), pane(t, w, "s1")
	sent := time.Now()
	id, _ := request(t, s1, "quick-1", "fyi: the build is green")
	// The turn's end: quick-1 back at rest after its turn.
	if !until(hangBound, func() bool { return len(w.Submissions(qp)) == 1 }) {
		t.Fatal("not typed")
	}
	if !until(hangBound, func() bool { a, _ := w.Agent("quick-1"); return string(a.AgentStatus) == "idle" }) {
		t.Fatal("turn never ended")
	}
	ended := time.Now()
	if !until(hangBound, func() bool { ns, _ := noticesOf(w, p1); return len(ns) > 0 }) {
		t.Fatalf("no notice %v after the turn's end", hangBound)
	}
	took := time.Since(ended)
	t.Logf("notice %v after the recipient's turn ended (grace %v)", took.Round(10*time.Millisecond), reqGrace)
	if d := time.Since(sent); d < reqGrace {
		t.Fatalf("notice %v after the send, want at least the grace %v", d, reqGrace)
	}
	if st := waitState(t, s1, id, 1); st != outbox.OutcomeHandled {
		t.Fatalf("wait: %s", st)
	}
	time.Sleep(time.Second)
	ns, turns := noticesOf(w, p1)
	if len(ns) != 1 || turns != 1 || len(w.Submissions(p1)) != 1 {
		t.Fatalf("notices %q in %d turns (%d turns in all), want one notice in the only turn", noticeLines(ns), turns, len(w.Submissions(p1)))
	}
	if diff := cmp.Diff(link.Notice{Protocol: link.Protocol, Notice: "handled", About: id, Peer: "quick-1"}, ns[0]); diff != "" {
		t.Fatalf("notice mismatch (-want +got):\n%s", diff)
	}
	if text := w.Submissions(p1)[0].Text; strings.Contains(text, "w1") || len(link.ExtractAll(text)) != 0 {
		t.Fatalf("notice turn %q", text)
	}
}

// Blocked while on a request, or its pane closed (typed or held): one
// notice each, blocked or gone.
func TestRequestBlockedAndGoneNotices(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Parallel()
	srv, w := reqServer(t)
	s1 := reqSession(t, srv, w, "s1")
	blocked, _ := request(t, s1, "slow", "needs a permission")
	gone, _ := request(t, s1, "closer", "are you there?")
	heldGone, d := request(t, s1, "held-closer", "later")
	if d != link.DeliveryHeld {
		t.Fatalf("to a working agent: %s", d)
	}
	for _, n := range []string{"slow", "closer"} {
		if !until(hangBound, func() bool { return len(w.Submissions(pane(t, w, n))) == 1 }) {
			t.Fatalf("%s: not typed", n)
		}
	}
	if err := w.SetStatus(pane(t, w, "slow"), "blocked"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"closer", "held-closer"} {
		if err := w.Close(pane(t, w, n)); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]link.Notice{
		blocked:  {Protocol: link.Protocol, Notice: "blocked", About: blocked, Peer: "slow"},
		gone:     {Protocol: link.Protocol, Notice: "gone", About: gone, Peer: "closer"},
		heldGone: {Protocol: link.Protocol, Notice: "gone", About: heldGone, Peer: "held-closer"},
	}
	for id, n := range want {
		if st := waitState(t, s1, id, 50); st != n.Notice {
			t.Errorf("wait %s (%s): %s", id, n.Peer, st)
		}
	}
	p1 := pane(t, w, "s1")
	until(hangBound, func() bool { ns, _ := noticesOf(w, p1); return len(ns) >= len(want) })
	time.Sleep(time.Second)
	ns, turns := noticesOf(w, p1)
	t.Logf("%d notices in %d turns", len(ns), turns)
	if len(ns) != len(want) {
		t.Fatalf("notices %q, want %d", noticeLines(ns), len(want))
	}
	for _, n := range ns {
		if want[n.About] != n {
			t.Errorf("notice about %s mismatch (-want +got):\n%s", n.About, cmp.Diff(want[n.About], n))
		}
		delete(want, n.About)
	}
}

// callErr is call without t: for goroutines and servers that may be gone.
func callErr(s *mcp.ClientSession, name string, args map[string]any, d time.Duration) (map[string]any, string, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, "", false, err
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	var sc map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &sc)
	}
	return sc, text, res.IsError, nil
}

// 8 requests from 3 senders to 4 recipients at once: each sender gets
// exactly the notices of its own requests, each once; each recipient
// each request once.
func TestNoticesToTheirSendersAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Parallel()
	srv, w := reqServer(t)
	plan := map[string][]string{
		"s1": {"quick-1", "quick-2", "quick-3"},
		"s2": {"quick-2", "quick-3", "quick-4"},
		"s3": {"quick-1", "quick-4"},
	}
	ss := map[string]session{}
	for s := range plan {
		ss[s] = reqSession(t, srv, w, s)
	}
	var mu sync.Mutex
	ids := map[string]map[string]string{} // sender → id → recipient
	var wg sync.WaitGroup
	var errs []string
	start := make(chan struct{})
	for s, tos := range plan {
		ids[s] = map[string]string{}
		for _, to := range tos {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				sc, text, isErr, err := callErr(ss[s].ClientSession, "herdr_link_send", map[string]any{"to": to, "message": "job for " + to + " from " + s}, hangBound)
				mu.Lock()
				defer mu.Unlock()
				if err != nil || isErr {
					errs = append(errs, fmt.Sprintf("%s→%s: %v %s", s, to, err, text))
					return
				}
				ids[s][sc["id"].(string)] = to
			}()
		}
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for s, want := range ids {
		p := pane(t, w, s)
		if !until(hangBound, func() bool { ns, _ := noticesOf(w, p); return len(ns) >= len(want) }) {
			ns, _ := noticesOf(w, p)
			t.Errorf("%s: %d notices of %d", s, len(ns), len(want))
		}
	}
	time.Sleep(time.Second) // nothing more arrives
	for s, want := range ids {
		ns, turns := noticesOf(w, pane(t, w, s))
		t.Logf("%s: %d notices in %d turns", s, len(ns), turns)
		seen := map[string]bool{}
		for _, n := range ns {
			switch to, ok := want[n.About]; {
			case !ok:
				t.Errorf("%s got another sender's notice: %s about %s from %s", s, n.Notice, n.About, n.Peer)
			case seen[n.About]:
				t.Errorf("%s got the notice about %s twice, want once", s, n.About)
			case n.Peer != to || n.Notice != "handled":
				t.Errorf("%s: notice %s about %s from %s, want handled by %s", s, n.Notice, n.About, n.Peer, to)
			}
			seen[n.About] = true
		}
		if len(seen) != len(want) {
			t.Errorf("%s: notices of %d requests, want %d", s, len(seen), len(want))
		}
		for id, to := range want {
			if n := typedIDs(w, pane(t, w, to))[id]; n != 1 {
				t.Errorf("%s's %s typed %d times into %s", s, id, n, to)
			}
		}
	}
}

// reqStore opens the outbox the servers of srv share.
func reqStore(srv *sockettest.Server) (*outbox.Store, error) {
	pl := &panelock.Locker{Scope: srv.Path()}
	dir, err := pl.DirPath()
	if err != nil {
		return nil, err
	}
	return outbox.Open(dir, pl.ScopeID())
}

// proc is a herdr-link server that a test may kill.
type proc struct {
	cs  *mcp.ClientSession
	cmd *exec.Cmd
}

// spawn starts and activates a server for pane; its log goes to log when
// set.
func spawn(srv *sockettest.Server, pane string, flags []string, log io.Writer) (*proc, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cmd := exec.Command(binary, flags...)
	cmd.Env = append(append(os.Environ(), "HERDR_LINK_LOG=error"), srv.Env(pane)...)
	if log != nil {
		cmd.Env = append(cmd.Env, "HERDR_LINK_LOG=info")
		cmd.Stderr = log
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, err
	}
	p := &proc{cs: cs, cmd: cmd}
	if _, text, isErr, err := callErr(cs, "herdr_link", nil, 10*time.Second); err != nil || isErr {
		p.close()
		return nil, fmt.Errorf("activation: %v %s", err, text)
	}
	return p, nil
}

func (p *proc) kill() { _ = p.cmd.Process.Kill() }

func (p *proc) close() { _ = p.cs.Close() }
