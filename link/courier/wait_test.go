package courier_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link/courier"
	"github.com/herdr-link/herdr-link/link/deliver"
)

// fakePorts stands for link: a failure is an error naming it.
type fakePorts struct{}

// failed is the error fakePorts gives for a courier failure.
type failed struct{ why courier.Failure }

func (f failed) Error() string { return fmt.Sprintf("failure %d", f.why) }

func (fakePorts) Fail(why courier.Failure, cause error) error { return failed{why} }
func (fakePorts) OutboxFailed(err error) error                { return err }
func (fakePorts) Ended(ctx context.Context) error             { return ctx.Err() }
func (fakePorts) TypedMaybe(err error) bool                   { return true }
func (fakePorts) Composer(context.Context, deliver.Agent) (string, bool) {
	return "", false
}

var (
	brain  = deliver.Agent{PaneID: "w1:p1", TerminalID: "t1", Kind: "claude", WorkspaceID: "w1"}
	writer = deliver.Agent{PaneID: "w1:p2", TerminalID: "t2", Kind: "codex", WorkspaceID: "w1"}
	busy   = deliver.Agent{PaneID: "w1:p3", TerminalID: "t3", Kind: "claude", WorkspaceID: "w1"}
)

// newCourier is a courier over a store of its own, without Herdr: the
// ledger and the wait only.
func newCourier(t *testing.T) *courier.Courier {
	t.Helper()
	st, err := outbox.Open(t.TempDir(), "courier")
	if err != nil {
		t.Fatal(err)
	}
	return courier.New(courier.Config{Outbox: st, Ports: fakePorts{}})
}

// WaitReply: pending at its timeout, the outcome once the request has
// one, and NoRequest for an id that is not the caller's request (another
// sender's reads as an unknown one).
func TestWaitReply(t *testing.T) { synctest.Test(t, testWaitReply) }

func testWaitReply(t *testing.T) {
	c := newCourier(t)
	sent := courier.Sent{ID: "hl_mx5a_b2c3", From: "brain", To: "busy"}
	if _, err := c.RecordRequest(brain, busy, sent); err != nil {
		t.Fatal(err)
	}
	got, err := c.WaitReply(t.Context(), brain, sent.ID, 50*time.Millisecond, nil)
	if want := (courier.WaitResult{ID: sent.ID, Peer: "busy", State: courier.RequestPending}); err != nil || got != want {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
	for _, tc := range []struct {
		name string
		self deliver.Agent
		id   string
	}{{"another sender's", writer, sent.ID}, {"unknown", brain, "hl_zzz_000"}} {
		_, err := c.WaitReply(t.Context(), tc.self, tc.id, time.Millisecond, nil)
		if want := (failed{courier.NoRequest}); !errors.Is(err, want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, want)
		}
	}
	c.Answered(courier.Sent{ID: "hl_mx5a_d4e5", From: "busy", To: "brain", ReplyTo: sent.ID})
	got, err = c.WaitReply(t.Context(), brain, sent.ID, time.Second, nil)
	if want := (courier.WaitResult{ID: sent.ID, Peer: "busy", State: outbox.OutcomeReplied}); err != nil || got != want {
		t.Errorf("after the answer: got %+v, %v; want %+v", got, err, want)
	}
}

// A wait whose context ends returns the caller's error for it at once.
func TestWaitReplyEnded(t *testing.T) { synctest.Test(t, testWaitReplyEnded) }

func testWaitReplyEnded(t *testing.T) {
	c := newCourier(t)
	sent := courier.Sent{ID: "hl_mx5a_b2c3", From: "brain", To: "busy"}
	if _, err := c.RecordRequest(brain, busy, sent); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := c.WaitReply(ctx, brain, sent.ID, courier.MaxWaitTimeout, nil)
		done <- err
	}()
	synctest.Wait()
	cancel()
	if got := <-done; !errors.Is(got, context.Canceled) {
		t.Errorf("got %v, want %v", got, context.Canceled)
	}
}

// Without an outbox nothing is a request.
func TestWaitReplyWithoutOutbox(t *testing.T) {
	c := courier.New(courier.Config{Ports: fakePorts{}})
	_, err := c.WaitReply(t.Context(), brain, "hl_mx5a_b2c3", time.Millisecond, nil)
	if want := (failed{courier.NoRequest}); !errors.Is(err, want) {
		t.Errorf("got %v, want %v", err, want)
	}
}
