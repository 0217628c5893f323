//go:build unix

package herdrlink

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// killPlan is one trial of TestKillNineLosesNoRequest: a request from s to
// r, and a kill -9 of servers at a random point of its life.
type killPlan struct {
	working bool          // r is working at the send: the request is held
	idleAt  time.Duration // when a working r comes to rest
	reply   bool          // r answers through its own server
	killAt  time.Duration // after the send began
	victims string        // "sender", "recipient" or "both"
	restart bool          // a new server in s's pane; else a's server adopts
}

func (p killPlan) String() string {
	return fmt.Sprintf("working=%v idleAt=%v reply=%v kill %s at %v restart=%v", p.working, p.idleAt, p.reply, p.victims, p.killAt, p.restart)
}

func randomPlan(r *rand.Rand) killPlan {
	return killPlan{
		working: r.IntN(2) == 0, idleAt: time.Duration(200+r.IntN(1000)) * time.Millisecond,
		reply: r.IntN(2) == 0, killAt: time.Duration(r.IntN(2500)) * time.Millisecond,
		victims: []string{"sender", "recipient", "both", "sender"}[r.IntN(4)], restart: r.IntN(2) == 0,
	}
}

// killWorld: the sender s, the recipient r, and a, whose server adopts
// what the killed ones left.
func killWorld(t *testing.T, p killPlan) *sockettest.World {
	t.Helper()
	status, turn := "idle", 300
	if p.working {
		status = "working"
	}
	if p.reply {
		turn = -1 // r's turn ends once it has replied
	}
	w, err := sockettest.ParseWorld(fmt.Appendf(nil, `{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
 {"id":"w1:p1","agent":{"kind":"claude","name":"s","status":"idle","turn_ms":200,"submit_ms":30}},
 {"id":"w1:p2","agent":{"kind":"claude","name":"r","status":%q,"turn_ms":%d,"submit_ms":30}},
 {"id":"w1:p3","agent":{"kind":"claude","name":"a","status":"idle","turn_ms":200,"submit_ms":30}}]}]}]}`, status, turn))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// killResult is what a trial found.
type killResult struct {
	plan     killPlan
	phase    string   // what the request was doing when the kill came
	requests int      // requests seen (sent, typed, or in the store)
	outcomes []string // their outcomes
	lost     []string // no outcome at the end, or typed with no record
	// noticeTwice, typedTwice: notices and envelopes typed more than once.
	noticeTwice, typedTwice int
	noNotice                []string // ended without a reply, no notice typed (why)
	errs                    []string
}

// servers are a trial's current servers, by pane.
type servers struct {
	mu sync.Mutex
	by map[string]*proc
	// all is every server started, to close at the end.
	all []*proc
	log bytes.Buffer // their logs
}

// prefixed writes to w, under mu, each write prefixed.
type prefixed struct {
	w      io.Writer
	mu     *sync.Mutex
	prefix string
}

func (p *prefixed) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s %s%s", time.Now().Format("15:04:05.000"), p.prefix, b)
	return len(b), nil
}

func (s *servers) get(pane string) *proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.by[pane]
}

func (s *servers) start(srv *sockettest.Server, pane string) error {
	p, err := spawn(srv, pane, reqFlags, &prefixed{w: &s.log, mu: &s.mu, prefix: pane + ": "})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.by[pane] = p
	s.all = append(s.all, p)
	return nil
}

func (s *servers) kill(pane string) {
	s.mu.Lock()
	p := s.by[pane]
	delete(s.by, pane)
	s.mu.Unlock()
	if p != nil {
		p.kill()
	}
}

func (s *servers) closeAll() {
	s.mu.Lock()
	all := s.all
	s.mu.Unlock()
	for _, p := range all {
		p.close()
	}
}

const (
	sPane, rPane, aPane = "w1:p1", "w1:p2", "w1:p3"
)

// runKillTrial runs one trial against srv (whose world is w).
//
// Long: one trial's timeline (send, rest, reply, kill, restart), then its
// accounting; the goroutines share the servers and must be read together.
func runKillTrial(srv *sockettest.Server, w *sockettest.World, p killPlan) killResult {
	res := killResult{plan: p}
	ss := &servers{by: map[string]*proc{}}
	defer ss.closeAll()
	for _, pn := range []string{sPane, rPane, aPane} {
		if err := ss.start(srv, pn); err != nil {
			res.errs = append(res.errs, "start: "+err.Error())
			return res
		}
	}
	st, err := reqStore(srv)
	if err != nil {
		res.errs = append(res.errs, err.Error())
		return res
	}
	// The trial's entries are its sender's: a store is keyed by the
	// socket's inode, which an earlier simulator's socket may have had.
	info, _ := w.Agent("s")
	store := trialStore{st, st.KeyHash(info.TerminalID)}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ids := map[string]bool{}
	sender := ss.get(sPane)
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc, _, isErr, err := callErr(sender.cs, "herdr_link_send", map[string]any{"to": "r", "message": "job"}, 15*time.Second)
		if err == nil && !isErr {
			mu.Lock()
			ids[sc["id"].(string)] = true
			mu.Unlock()
		}
	}()
	if p.working {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(p.idleAt)
			_ = w.SetStatus(rPane, "idle")
		}()
	}
	if p.reply {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var env link.Envelope
			until(10*time.Second, func() bool {
				for _, s := range w.Submissions(rPane) {
					if es := link.ExtractAll(s.Text); len(es) > 0 {
						env = es[0]
						return true
					}
				}
				return false
			})
			if env.ID != "" {
				time.Sleep(time.Duration(rand.IntN(200)) * time.Millisecond)
				if r := ss.get(rPane); r != nil {
					_, _, _, _ = callErr(r.cs, "herdr_link_send", map[string]any{"to": "s", "message": "done", "reply_to": env.ID}, 15*time.Second)
				}
			}
			_ = w.SetStatus(rPane, "idle") // r's turn ends after its reply
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(p.killAt)
		ph := phase(store)
		ss.mu.Lock()
		fmt.Fprintf(&ss.log, "%s kill %s (%s)\n", time.Now().Format("15:04:05.000"), p.victims, ph)
		ss.mu.Unlock()
		mu.Lock()
		res.phase = ph
		mu.Unlock()
		if p.victims != "recipient" {
			ss.kill(sPane)
		}
		if p.victims != "sender" {
			ss.kill(rPane)
		}
		time.Sleep(100 * time.Millisecond)
		if p.victims != "sender" {
			if err := ss.start(srv, rPane); err != nil {
				mu.Lock()
				res.errs = append(res.errs, "restart r: "+err.Error())
				mu.Unlock()
			}
		}
		if p.victims != "recipient" && p.restart {
			if err := ss.start(srv, sPane); err != nil {
				mu.Lock()
				res.errs = append(res.errs, "restart s: "+err.Error())
				mu.Unlock()
			}
		}
	}()
	wg.Wait()
	settle(store, 25*time.Second)
	time.Sleep(1500 * time.Millisecond) // a notice due is typed by then
	account(&res, store, w, ids, ss.get(sPane))
	if len(res.lost) > 0 {
		ss.mu.Lock()
		res.errs = append(res.errs, "logs:\n"+ss.log.String())
		ss.mu.Unlock()
	}
	return res
}

// phase names what the trial's request is doing by its store entries:
// none yet, held, being typed, recorded (not known typed), pending
// (typed), answered; a notice held (h) or being typed (t).
func phase(store trialStore) string {
	ents, err := store.list()
	if err != nil {
		return "unreadable"
	}
	ph := "none"
	for _, e := range ents {
		switch {
		case strings.HasPrefix(e.ID, "n_") && e.Held():
			return "notice " + string(e.State)
		case e.State == outbox.StateTyping:
			return "typing"
		case e.State == outbox.StateHeld:
			ph = "held"
		case e.Pending() && ph == "none":
			ph = "recorded"
			if r, err := store.Request(e); err == nil && !r.Typed.IsZero() {
				ph = "pending"
			}
		case e.State == outbox.StateAnswered && ph == "none":
			ph = "answered"
		}
	}
	return ph
}

// trialStore is a trial's view of the store: its sender's entries.
type trialStore struct {
	*outbox.Store
	sender string
}

func (s trialStore) list() ([]outbox.Entry, error) { return s.BySender(s.sender) }

// settle waits until every request in store has its outcome.
func settle(store trialStore, d time.Duration) {
	until(d, func() bool {
		ents, err := store.list()
		if err != nil {
			return false
		}
		for _, e := range ents {
			if e.Pending() {
				return false
			}
		}
		return true
	})
}

// account counts a trial's requests, outcomes, losses and doubles: the
// requests are those sent (ids), typed into r, or recorded in store.
func account(res *killResult, store trialStore, w *sockettest.World, ids map[string]bool, s *proc) {
	typed := typedIDs(w, rPane)
	for id, n := range typed {
		ids[id] = true
		if n > 1 {
			res.typedTwice++
		}
	}
	for id, n := range typedIDs(w, sPane) {
		if n > 1 {
			res.typedTwice++
			res.errs = append(res.errs, "reply typed twice: "+id)
		}
	}
	ents, _ := store.list()
	for _, e := range ents {
		if e.IsRequest() {
			ids[e.ID] = true
		}
	}
	notices := map[string]int{}
	ns, _ := noticesOf(w, sPane)
	for _, n := range ns {
		notices[n.About]++
	}
	for _, n := range notices {
		if n > 1 {
			res.noticeTwice++
		}
	}
	for id := range ids {
		res.requests++
		e, err := store.FindRequest(id)
		if err != nil {
			res.lost = append(res.lost, fmt.Sprintf("%s: no record (typed %d)", id, typed[id]))
			continue
		}
		r, err := store.Request(e)
		if err != nil || r.State != outbox.StateAnswered {
			res.lost = append(res.lost, fmt.Sprintf("%s: pending (typed %d, recorded typed %v seq %d)", id, typed[id], !r.Typed.IsZero(), r.TypedSeq))
			continue
		}
		res.outcomes = append(res.outcomes, r.Outcome)
		if r.Outcome != outbox.OutcomeReplied && notices[id] == 0 {
			why := "no notice record"
			if ne, err := store.Find("n_" + strings.TrimPrefix(id, "hl_")); err == nil {
				if m, err := store.Read(ne); err == nil {
					why = fmt.Sprintf("notice %c %s", ne.State, m.End)
				}
			}
			res.noNotice = append(res.noNotice, r.Outcome+": "+why)
		}
		if s != nil {
			sc, text, isErr, err := callErr(s.cs, "herdr_link_wait", map[string]any{"id": id, "timeout_s": 0}, 5*time.Second)
			if err != nil || isErr || sc["state"] != r.Outcome {
				res.errs = append(res.errs, fmt.Sprintf("wait %s from the sender's server: %v %v %s, store %s", id, sc, err, text, r.Outcome))
			}
		}
	}
}

// kill -9 of the servers of senders and recipients at random points of a
// request's life (held, being typed, pending, being answered), then a new
// server in the pane or another pane's server adopting: every request
// ends with an outcome, no notice is typed twice, no message twice.
func TestKillNineLosesNoRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 21))
	type trial struct {
		plan killPlan
		srv  *sockettest.Server
		w    *sockettest.World
	}
	var ts []trial
	for range trials {
		p := randomPlan(rng)
		w := killWorld(t, p)
		srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
		freshStore(t, srv)
		ts = append(ts, trial{p, srv, w})
	}
	results := make([]killResult, len(ts))
	sem := make(chan struct{}, 10)
	var wg sync.WaitGroup
	for i, tr := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = runKillTrial(tr.srv, tr.w, tr.plan)
		}()
	}
	wg.Wait()
	var requests, lost, noticeTwice, typedTwice, noNotice int
	outcomes, phases := map[string]int{}, map[string]int{}
	for i, r := range results {
		phases[r.plan.victims+" "+r.phase]++
		requests += r.requests
		lost += len(r.lost)
		noticeTwice += r.noticeTwice
		typedTwice += r.typedTwice
		noNotice += len(r.noNotice)
		for _, o := range r.outcomes {
			outcomes[o]++
		}
		if len(r.lost)+r.noticeTwice+r.typedTwice+len(r.errs) > 0 {
			t.Errorf("trial %d (%v): lost %v, notices twice %d, typed twice %d, %v", i, r.plan, r.lost, r.noticeTwice, r.typedTwice, r.errs)
		}
		if len(r.noNotice) > 0 {
			t.Logf("trial %d (%v): no notice: %v", i, r.plan, r.noNotice)
		}
	}
	t.Logf("%d trials, %d requests: killed at %v; outcomes %v; lost %d, notices twice %d, typed twice %d, ended without a reply and no notice %d",
		len(results), requests, phases, outcomes, lost, noticeTwice, typedTwice, noNotice)
	if requests == 0 {
		t.Error(errors.New("no request at all"))
	}
}

// A sender's server killed while its request's typing is under way, the
// prompt never reaching the recipient (Herdr hangs on it until the caller
// is gone): held and claimed by the courier, or typed directly by the
// send. Another pane's server adopts what it left; the message is never
// typed (exactly once allows no retry), and the request must still end
// with an outcome, not stay pending for -request-ttl (an hour).
func TestKillDuringTypingEndsTheRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, tc := range []struct {
		name    string
		working bool   // r working at the send: held, typed by the courier
		phase   string // the store's phase at the kill
	}{
		{"held, claimed by the courier", true, "typing"},
		{"sent directly, recorded", false, "recorded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := killWorld(t, killPlan{working: tc.working})
			srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
			freshStore(t, srv)
			ss := &servers{by: map[string]*proc{}}
			defer ss.closeAll()
			for _, pn := range []string{sPane, aPane} {
				if err := ss.start(srv, pn); err != nil {
					t.Fatal(err)
				}
			}
			st, err := reqStore(srv)
			if err != nil {
				t.Fatal(err)
			}
			info, _ := w.Agent("s")
			store := trialStore{st, st.KeyHash(info.TerminalID)}
			if !tc.working {
				srv.SetFault("agent.prompt", sockettest.Fault{Hang: true})
			}
			go func() {
				_, _, _, _ = callErr(ss.get(sPane).cs, "herdr_link_send", map[string]any{"to": "r", "message": "job"}, 15*time.Second)
			}()
			if tc.working {
				if !until(5*time.Second, func() bool { return phase(store) == "held" }) {
					t.Fatalf("not held: %s", phase(store))
				}
				srv.SetFault("agent.prompt", sockettest.Fault{Hang: true})
				if err := w.SetStatus(rPane, "idle"); err != nil {
					t.Fatal(err)
				}
			}
			if !until(10*time.Second, func() bool { return phase(store) == tc.phase }) {
				t.Fatalf("phase %s, want %s", phase(store), tc.phase)
			}
			ss.kill(sPane)
			time.Sleep(200 * time.Millisecond)
			srv.ClearFaults()
			settle(store, 20*time.Second)
			if n := len(w.Submissions(rPane)); n != 0 {
				t.Fatalf("typed %d times: the case is not the one under test", n)
			}
			ents, _ := store.list()
			for _, e := range ents {
				if !e.IsRequest() {
					continue
				}
				r, err := store.Request(e)
				if err != nil || r.State != outbox.StateAnswered {
					t.Errorf("request %s still pending 20 s after its sender's server died (typed recorded %v, seq %d): it would stay so until -request-ttl",
						e.ID, !r.Typed.IsZero(), r.TypedSeq)
				}
			}
		})
	}
}
