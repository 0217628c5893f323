package link_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link"
)

// fakeHerdr is a controllable Herdr with one caller (brain, w1:p1) and one
// target (reviewer, w1:p2). After a prompt, script runs in its own
// goroutine and changes the target as the receiving agent would.
type fakeHerdr struct {
	mu       sync.Mutex
	target   link.Agent
	script   func(f *fakeHerdr)
	promptFn func() error
	prompts  int
	texts    []string // the text of each prompt
	gets     int
	locked   func() bool // reports whether the delivery lock is held
	lockedAt []bool      // locked() at each prompt

	// events turns on WatchPanes: each set is then an event on every
	// open stream; without it WatchPanes refuses (watchErr or an error).
	events    bool
	watchErr  error
	streams   []*fakeStream
	watches   int
	openAtPut []bool // whether a stream was open at each prompt
	screen    string // what ReadScreen answers
}

// fakeStream is a controllable status stream.
type fakeStream struct {
	ch     chan string
	done   chan struct{}
	closed bool
}

func (s *fakeStream) Next(ctx context.Context) (string, error) {
	select {
	case e, ok := <-s.ch:
		if !ok {
			return "", errors.New("fake: stream ended")
		}
		return e, nil
	case <-s.done:
		return "", errors.New("fake: stream closed")
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (s *fakeStream) Close() error {
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	return nil
}

func (f *fakeHerdr) WatchPanes(ctx context.Context, panes []string) (link.PaneEvents, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watches++
	if !f.events {
		if f.watchErr != nil {
			return nil, f.watchErr
		}
		return nil, errors.New("fake: no events")
	}
	s := &fakeStream{ch: make(chan string, 64), done: make(chan struct{})}
	f.streams = append(f.streams, s)
	return s, nil
}

// endStreams ends every open stream from Herdr's side.
func (f *fakeHerdr) endStreams() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.streams {
		close(s.ch)
	}
	f.streams = nil
}

// emit sends the target's status to every open stream (f.mu held).
func (f *fakeHerdr) emit() {
	for _, s := range f.streams {
		select {
		case <-s.done:
		case s.ch <- f.target.PaneID:
		}
	}
}

// streamOpen reports whether a stream is open (f.mu held).
func (f *fakeHerdr) streamOpen() bool {
	for _, s := range f.streams {
		if !s.closed {
			return true
		}
	}
	return false
}

func newFake(kind, status string) *fakeHerdr {
	return &fakeHerdr{target: link.Agent{Name: "reviewer", Status: status, WorkspaceID: "w1", PaneID: "w1:p2", TerminalID: "term_2", Kind: kind, Seq: 7}}
}

func (f *fakeHerdr) set(status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.target.Status = status
	f.target.Seq++
	f.emit()
}

func (f *fakeHerdr) ListAgents(context.Context) ([]link.Agent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return []link.Agent{{Name: "brain", Status: "working", WorkspaceID: "w1", PaneID: "w1:p1", TerminalID: "term_1", Kind: "claude"}, f.target}, nil
}

func (f *fakeHerdr) GetAgent(ctx context.Context, target string) (link.Agent, error) {
	if err := ctx.Err(); err != nil {
		return link.Agent{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	return f.target, nil
}

func (f *fakeHerdr) Prompt(ctx context.Context, target, text string) (link.Agent, error) {
	f.mu.Lock()
	f.prompts++
	f.texts = append(f.texts, text)
	f.openAtPut = append(f.openAtPut, f.streamOpen())
	if f.locked != nil {
		f.lockedAt = append(f.lockedAt, f.locked())
	}
	before, script, fn := f.target, f.script, f.promptFn
	f.mu.Unlock()
	if fn != nil {
		if err := fn(); err != nil {
			return link.Agent{}, err
		}
	}
	if script != nil {
		go script(f)
	}
	return before, nil
}

func (f *fakeHerdr) Rename(context.Context, string, string) (link.Agent, error) {
	return link.Agent{}, errors.New("unexpected rename")
}
func (f *fakeHerdr) GetPane(context.Context, string) (link.Pane, error) {
	return link.Pane{}, errors.New("unexpected pane.get")
}
func (f *fakeHerdr) ClosePane(context.Context, string) error { return nil }
func (f *fakeHerdr) ReadScreen(context.Context, string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.screen, nil
}

// after returns a script that sleeps d and then sets the statuses in turn.
func after(d time.Duration, statuses ...string) func(*fakeHerdr) {
	return func(f *fakeHerdr) {
		time.Sleep(d)
		for i, s := range statuses {
			if i > 0 {
				time.Sleep(10 * time.Millisecond)
			}
			f.set(s)
		}
	}
}

// slow is after with d between the statuses too.
func slow(d time.Duration, statuses ...string) func(*fakeHerdr) {
	return func(f *fakeHerdr) {
		for _, s := range statuses {
			time.Sleep(d)
			f.set(s)
		}
	}
}

func TestDeliveryValues(t *testing.T) {
	msg := "please review"
	tests := []struct {
		name   string
		kind   string
		status string
		script func(*fakeHerdr)
		mode   link.DeliveryMode
		want   string
		// took is the virtual time Send takes.
		took time.Duration
	}{
		{"idle claude submits", "claude", "idle", after(300*time.Millisecond, "working"), link.DeliveryConfirm, link.DeliverySubmitted, 350 * time.Millisecond},
		{"done opencode submits", "opencode", "done", after(time.Second, "working"), link.DeliveryConfirm, link.DeliverySubmitted, 1050 * time.Millisecond},
		{"idle codex: a short turn seen only by its seq", "codex", "idle", after(300*time.Millisecond, "working", "idle"), link.DeliveryConfirm, link.DeliverySubmitted, 350 * time.Millisecond},
		{"idle claude asks for approval at once", "claude", "idle", after(300*time.Millisecond, "blocked"), link.DeliveryConfirm, link.DeliverySubmitted, 350 * time.Millisecond},
		{"working claude queues", "claude", "working", nil, link.DeliveryConfirm, link.DeliveryQueued, 0},
		{"working pi queues", "pi", "working", nil, link.DeliveryConfirm, link.DeliveryQueued, 0},
		{"working opencode queues", "opencode", "working", nil, link.DeliveryConfirm, link.DeliveryQueued, 0},
		{"working codex is interrupted", "codex", "working", nil, link.DeliveryConfirm, link.DeliveryInterrupting, 0},
		{"stuck composer", "claude", "idle", nil, link.DeliveryConfirm, link.DeliveryUnconfirmed, link.ConfirmBudget(600)},
		{"working unknown kind that stays working", "kimi", "working", nil, link.DeliveryConfirm, link.DeliveryUnconfirmed, link.ConfirmBudget(600)},
		{"working unknown kind: turn ends, then a new one", "kimi", "working", after(500*time.Millisecond, "idle", "working"), link.DeliveryConfirm, link.DeliverySubmitted, 550 * time.Millisecond},
		{"working unknown kind: turn ends, a new one seen later", "kimi", "working", slow(500*time.Millisecond, "idle", "working"), link.DeliveryConfirm, link.DeliverySubmitted, 1050 * time.Millisecond},
		{"working unknown kind: turn ends, nothing follows", "kimi", "working", after(500*time.Millisecond, "idle"), link.DeliveryConfirm, link.DeliveryUnconfirmed, link.ConfirmBudget(600)},
		{"fast", "claude", "idle", after(300*time.Millisecond, "working"), link.DeliveryFast, link.DeliveryUnconfirmed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake(tt.kind, tt.status)
				f.script = tt.script
				lk := newLocker()
				l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Delivery: tt.mode, Locker: lk,
					ConfirmBudget: func(int) time.Duration { return link.ConfirmBudget(600) }})
				start := time.Now()
				res, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: msg, When: link.WhenNow})
				took := time.Since(start)
				if err != nil {
					t.Fatal(err)
				}
				if res.Status != "sent" || res.Delivery != tt.want {
					t.Fatalf("send = %s, delivery %s; want sent, %s", res.Status, res.Delivery, tt.want)
				}
				// Polls are 50 ms apart: the answer comes within one poll.
				if took < tt.took-50*time.Millisecond || took > tt.took+60*time.Millisecond {
					t.Fatalf("took %v, want %v", took, tt.took)
				}
				// No agent.get: the send's own agent.list, read moments
				// before, is the occupant's check before typing; no watch.
				if tt.mode == link.DeliveryFast && f.gets != 0 {
					t.Fatalf("fast mode: got %d agent.get, want 0 (no re-read after a fresh list, no watch)", f.gets)
				}
				// The lock outlives Herdr's Enter even when the answer is
				// known at once (or a submission seen early), and is
				// released after it.
				if took < link.SubmitHold && !lk.isHeld() {
					t.Fatal("lock released before Herdr's Enter")
				}
				// A queued delivery too is held past the Enter only, not
				// through the running turn (later deliveries join the
				// queue).
				time.Sleep(link.SubmitHold + time.Millisecond)
				if lk.isHeld() {
					t.Fatal("lock still held")
				}
				synctest.Wait()
			})
		})
	}
}

// ConfirmBudget grows with the message size, within bounds.
func TestConfirmBudget(t *testing.T) {
	for n, want := range map[int]time.Duration{
		0:         2500 * time.Millisecond,
		1 << 10:   2560 * time.Millisecond,
		256 << 10: 2500*time.Millisecond + 256*60*time.Millisecond, // Codex: ~15 s for 256 KB
		1 << 20:   30 * time.Second,
	} {
		if got := link.ConfirmBudget(n); got != want {
			t.Errorf("ConfirmBudget(%d) = %v, want %v", n, got, want)
		}
	}
}

// The watch has its own budget: a call deadline shorter than it does not
// cut it; cancelling the call does.
func TestConfirmOutlivesDeadlineNotCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("claude", "idle")
		f.script = after(time.Second, "working")
		l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Delivery: link.DeliveryConfirm})
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		res, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "x"})
		if err != nil || res.Delivery != link.DeliverySubmitted {
			t.Fatalf("send with a short deadline = %s, %v; want %s", res.Delivery, err, link.DeliverySubmitted)
		}
		f2 := newFake("claude", "idle")
		l2 := mustLink(t, link.Config{Herdr: f2, PaneID: "w1:p1", Delivery: link.DeliveryConfirm})
		ctx2, cancel2 := context.WithCancel(t.Context())
		go func() { time.Sleep(200 * time.Millisecond); cancel2() }()
		start := time.Now()
		res, err = l2.Send(ctx2, link.SendRequest{To: "reviewer", Message: "x"})
		if err != nil || res.Delivery != link.DeliveryUnconfirmed || time.Since(start) > 250*time.Millisecond {
			t.Fatalf("cancelled watch: send = %s, %v after %v; want %s within 250ms", res.Delivery, err, time.Since(start), link.DeliveryUnconfirmed)
		}
	})
}

// A new occupant in the target pane ends the watch: unconfirmed.
func TestConfirmOccupantReplaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("claude", "idle")
		f.script = func(f *fakeHerdr) {
			time.Sleep(100 * time.Millisecond)
			f.mu.Lock()
			f.target.TerminalID, f.target.Seq = "term_9", f.target.Seq+1
			f.mu.Unlock()
		}
		l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Delivery: link.DeliveryConfirm})
		start := time.Now()
		res, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x"})
		if err != nil || res.Delivery != link.DeliveryUnconfirmed || time.Since(start) > 200*time.Millisecond {
			t.Fatalf("send = %s, %v after %v; want %s within 200ms", res.Delivery, err, time.Since(start), link.DeliveryUnconfirmed)
		}
	})
}

type brokenLocker struct{}

func (brokenLocker) Lock(context.Context, string, time.Duration) (link.Lease, error) {
	return nil, fmt.Errorf("%w: /tmp/herdr-link-1000 is owned by another user", panelock.ErrUnsafeDir)
}
