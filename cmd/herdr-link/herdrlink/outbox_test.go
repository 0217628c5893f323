package herdrlink

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

var updateOutbox = flag.Bool("update-outbox", false, "rewrite testdata/outbox/*.golden")

// outboxNow is the verb's clock in these tests.
var outboxNow = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

type outboxFixture struct {
	cfg  outboxConfig
	sock string
	st   *outbox.Store // the store as a server of this socket opens it
}

// newOutboxFixture is a Herdr socket (any file: the store is keyed by its
// identity) and a private lock directory; sock "" makes the socket file.
func newOutboxFixture(t *testing.T, sock string) outboxFixture {
	t.Helper()
	if sock == "" {
		sock = filepath.Join(t.TempDir(), "herdr.sock")
		if err := os.WriteFile(sock, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	lockDir := filepath.Join(t.TempDir(), "locks")
	if err := os.Mkdir(lockDir, 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HERDR_SOCKET_PATH": sock}
	cfg := outboxConfig{getenv: func(k string) string { return env[k] }, now: func() time.Time { return outboxNow }, lockDir: lockDir}
	st, _, err := cfg.open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Release)
	return outboxFixture{cfg: cfg, sock: sock, st: st}
}

func (f outboxFixture) run(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = f.cfg.run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func (f outboxFixture) add(t *testing.T, st *outbox.Store, id, from, to string, text string, ago, hold time.Duration) outbox.Message {
	t.Helper()
	at := outboxNow.Add(-ago)
	m, err := st.Add(outbox.Message{ID: id, From: from, To: to, FromKey: "term_" + from, TargetKey: "term_" + to,
		PaneID: "w1:p-" + to, TerminalID: "term_" + to, Expires: at.Add(hold), Text: text, Reason: fixtureReasons[id]}, at)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fixtureReasons are the hold reasons of the fixture's messages (the
// others have none, as a message held by an older herdr-link).
var fixtureReasons = map[string]string{"hl_late": "state working", "hl_held1": "picker open", "hl_orphan": "draft"}

// seed fills the store with one message in each situation the listing
// shows.
func (f outboxFixture) seed(t *testing.T) {
	t.Helper()
	f.add(t, f.st, "hl_late", "brain", "coder", "too late", 2*time.Hour+3*time.Minute, time.Hour)
	ended := f.add(t, f.st, "hl_ended", "tester", "coder", "never typed", 40*time.Minute, 30*time.Minute)
	if err := f.st.End(ended, outbox.EndCancelled, outboxNow.Add(-10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	held := f.add(t, f.st, "hl_held1", "brain", "reviewer", strings.Repeat("x", 412), 65*time.Second, 30*time.Minute)
	// It expects a reply: its request record is no row of its own.
	if _, err := f.st.AddRequest(outbox.Request{ID: held.ID, To: held.To, From: held.From, TargetKey: held.TargetKey, FromKey: held.FromKey,
		Expires: held.Expires}, held.Accepted); err != nil {
		t.Fatal(err)
	}
	typing := f.add(t, f.st, "hl_typing", "tester", "reviewer", "hello", 50*time.Second, 30*time.Minute)
	if err := f.st.Claim(&typing); err != nil {
		t.Fatal(err)
	}
	// A process that is gone accepted this one.
	gone, err := outbox.Open(filepath.Dir(f.st.Dir), f.cfg.locker(f.sock).ScopeID())
	if err != nil {
		t.Fatal(err)
	}
	f.add(t, gone, "hl_orphan", "writer", "ops", "survive me", 5*time.Second, 30*time.Minute)
	gone.Release()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", "outbox", name)
	if *updateOutbox {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update-outbox)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update-outbox to accept):\n--- got\n%s--- want\n%s", name, got, want)
	}
}

// The listing is a contract: its text for operators and its JSON for
// scripts are golden.
func TestOutboxList(t *testing.T) {
	f := newOutboxFixture(t, "")
	if code, out, errOut := f.run(); code != 0 || out != "no held messages\n" || errOut != "" {
		t.Errorf("empty: %d %q %q", code, out, errOut)
	}
	f.seed(t)
	code, out, errOut := f.run()
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden(t, "list.golden", out)
	code, out, errOut = f.run("--json")
	if code != 0 || errOut != "" {
		t.Fatalf("--json: exit %d, stderr %q", code, errOut)
	}
	golden(t, "list.json.golden", strings.ReplaceAll(out, f.sock, "SOCKET"))
}

// Misuse exits 2 with the reason on stderr; an outbox that cannot be had
// exits 1; nothing goes to stdout but results.
func TestOutboxMisuse(t *testing.T) {
	f := newOutboxFixture(t, "")
	tests := []struct {
		args   []string
		code   int
		stdout string // substring; "" means empty
		stderr string // substring; "" means empty
	}{
		{args: []string{"-h"}, stdout: "usage: herdr-link outbox [flags]"},
		{args: []string{"cancel", "-h"}, stdout: "usage: herdr-link outbox cancel"},
		{args: []string{"bogus"}, code: 2, stderr: "unexpected arguments"},
		{args: []string{"-bogus"}, code: 2, stderr: "flag provided but not defined"},
		{args: []string{"cancel"}, code: 2, stderr: "name the messages to cancel"},
		{args: []string{"cancel", "--all", "hl_x"}, code: 2, stderr: "not both"},
		{args: []string{"cancel", "-wait", "0s", "hl_x"}, code: 2, stderr: "must be positive"},
		{args: []string{"cancel", "hl_nope"}, code: 1, stderr: "hl_nope: no such held message"},
		{args: []string{"cancel", "--all"}, stdout: "nothing to cancel"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := f.run(tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tt.code, errOut)
			}
			for _, c := range []struct{ stream, got, want string }{{"stdout", out, tt.stdout}, {"stderr", errOut, tt.stderr}} {
				if c.want == "" && c.got != "" || !strings.Contains(c.got, c.want) {
					t.Errorf("%s = %q, want %q", c.stream, c.got, c.want)
				}
			}
		})
	}
	noSock := newOutboxFixture(t, "")
	if err := os.Remove(noSock.sock); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{nil, {"cancel", "--all"}} {
		if code, out, errOut := noSock.run(args...); code != 1 || out != "" || !strings.Contains(errOut, "no Herdr socket at") {
			t.Errorf("%q without a socket: %d %q %q", args, code, out, errOut)
		}
	}
	// The verb is wired into the command and its help.
	var out, errOut bytes.Buffer
	if code := Run([]string{"help", "outbox"}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "usage: herdr-link outbox") {
		t.Errorf("help outbox: %d %q %q", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := Run([]string{"help"}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "outbox cancel") {
		t.Errorf("help lacks outbox: %q", out.String())
	}
}

// Cancel ends held messages as cancelled and says so; it refuses what is
// being typed and what is not held; --all cancels every held message and
// nothing else.
func TestOutboxCancel(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // lines
		stderr []string // substrings
		after  map[string]string
	}{
		{name: "one", args: []string{"hl_held1"}, stdout: []string{"cancelled hl_held1 (brain → reviewer)"},
			after: map[string]string{"hl_held1": "cancelled", "hl_typing": "typing", "hl_orphan": "held"}},
		{name: "several, one refused", args: []string{"hl_orphan", "hl_typing", "hl_held1"}, code: 1,
			stdout: []string{"cancelled hl_orphan (writer → ops)", "cancelled hl_held1 (brain → reviewer)"},
			stderr: []string{"hl_typing: being typed now: it cannot be cancelled"},
			after:  map[string]string{"hl_held1": "cancelled", "hl_typing": "typing", "hl_orphan": "cancelled"}},
		{name: "ended already", args: []string{"hl_ended"}, code: 1, stderr: []string{"hl_ended: already ended (cancelled)"}},
		{name: "unknown", args: []string{"hl_nope"}, code: 1, stderr: []string{"hl_nope: no such held message"}},
		{name: "all", args: []string{"--all"},
			stdout: []string{"cancelled hl_late (brain → coder)", "cancelled hl_held1 (brain → reviewer)", "cancelled hl_orphan (writer → ops)"},
			after:  map[string]string{"hl_held1": "cancelled", "hl_late": "cancelled", "hl_orphan": "cancelled", "hl_typing": "typing", "hl_ended": "cancelled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newOutboxFixture(t, "")
			f.seed(t)
			code, out, errOut := f.run(append([]string{"cancel"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tt.code, errOut)
			}
			if want := strings.Join(tt.stdout, "\n"); strings.TrimSuffix(out, "\n") != want {
				t.Errorf("stdout %q, want %q", out, want)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q lacks %q", errOut, s)
				}
			}
			if len(tt.stderr) == 0 && errOut != "" {
				t.Errorf("stderr %q", errOut)
			}
			for id, want := range tt.after {
				if got := stateOf(t, f.st, id); got != want {
					t.Errorf("%s: %s, want %s", id, got, want)
				}
			}
		})
	}
}

// stateOf is "held", "typing", or the End of an ended message.
func stateOf(t *testing.T, st *outbox.Store, id string) string {
	t.Helper()
	e, err := st.Find(id)
	if err != nil {
		return "gone"
	}
	if e.State != outbox.StateEnded {
		return stateName(e.State)
	}
	m, err := st.Read(e)
	if err != nil {
		t.Fatal(err)
	}
	return m.End
}

// --json says what was done to each message.
func TestOutboxCancelJSON(t *testing.T) {
	f := newOutboxFixture(t, "")
	f.seed(t)
	code, out, errOut := f.run("cancel", "--json", "hl_held1", "hl_typing")
	if code != 1 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden(t, "cancel.json.golden", strings.ReplaceAll(out, f.sock, "SOCKET"))
}

// Cancel waits for the target's delivery lock: while a delivery holds it,
// the message is not touched, and cancel says to try again.
func TestOutboxCancelWaitsForTheLock(t *testing.T) {
	f := newOutboxFixture(t, "")
	f.seed(t)
	lease, err := f.cfg.locker(f.sock).Lock(t.Context(), "term_reviewer", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut := f.run("cancel", "-wait", "50ms", "hl_held1")
	if code != 1 || !strings.Contains(errOut, "delivery lock stayed taken") {
		t.Errorf("with the lock taken: %d %q", code, errOut)
	}
	if got := stateOf(t, f.st, "hl_held1"); got != "held" {
		t.Errorf("hl_held1 %s while its target's lock was taken", got)
	}
	// Once the delivery under way released it, the cancel goes through.
	done := make(chan int)
	go func() { c, _, _ := f.run("cancel", "hl_held1"); done <- c }()
	lease.Unlock()
	if c := <-done; c != 0 || stateOf(t, f.st, "hl_held1") != outbox.EndCancelled {
		t.Errorf("after the lock was released: exit %d, %s", c, stateOf(t, f.st, "hl_held1"))
	}
}

const cancelWorld = `{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
 {"id":"w1:p1","agent":{"kind":"claude","name":"brain","status":"idle"}},
 {"id":"w1:p3","agent":{"kind":"claude","name":"busy","status":"working","turn_ms":40,"submit_ms":10}}
]}]}]}`

// A cancelled message is never typed, even with a courier waiting for its
// target: the message held after it is typed, it is not.
func TestOutboxCancelledNeverTyped(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(cancelWorld))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = 20 * time.Millisecond })
	f := newOutboxFixture(t, srv.Path())
	f.cfg.now = time.Now
	c := srv.Client()
	c.Timeout = 2 * time.Second
	l := mustLink(t, link.Config{Herdr: link.SocketHerdr{Client: c}, PaneID: "w1:p1", CallTimeout: c.Timeout, Delivery: link.DeliveryConfirm,
		SubmitHold: 60 * time.Millisecond, ConfirmBudget: func(int) time.Duration { return 500 * time.Millisecond },
		Locker: link.FileLocks(&panelock.Locker{Scope: f.sock, Dir: f.cfg.lockDir}), Outbox: f.st, CourierPoll: 20 * time.Millisecond})
	var ids []string
	for _, text := range []string{"cancel me", "type me"} {
		r, err := l.Send(t.Context(), link.SendRequest{To: "busy", Message: text})
		if err != nil || r.Delivery != link.DeliveryHeld {
			t.Fatalf("send %q = %s, %v; want %s", text, r.Delivery, err, link.DeliveryHeld)
		}
		ids = append(ids, r.ID)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = l.Deliver(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })

	if code, out, errOut := f.run("cancel", ids[0]); code != 0 || !strings.Contains(out, "cancelled "+ids[0]+" (brain → busy)") {
		t.Fatalf("cancel: %d %q %q", code, out, errOut)
	}
	if err := w.SetStatus("w1:p3", "idle"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(w.Submissions("w1:p3")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the message held after the cancelled one was never typed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	subs := w.Submissions("w1:p3")
	if envs := link.ExtractAll(subs[0].Text); len(subs) != 1 || len(envs) != 1 || envs[0].ID != ids[1] {
		t.Fatalf("%d turns with %d envelopes (first %q), want one turn with only %s", len(subs), len(envs), subs[0].Text, ids[1])
	}
	for _, in := range w.Inputs("w1:p3") {
		if strings.Contains(in, "cancel me") {
			t.Fatalf("the cancelled message was typed: %q", in)
		}
	}
	if got := stateOf(t, f.st, ids[0]); got != outbox.EndCancelled {
		t.Errorf("cancelled message: %s", got)
	}
}
