package link

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/link/deliver"
	"github.com/herdr-link/herdr-link/socket"
)

// TestPortsErrors: every failure of the delivery core reaches the model
// as the code and detail link gave it before the core was a package of
// its own, and only the failures that may have typed the message say so
// (typedMaybe keeps their request records; the others forget them).
func TestPortsErrors(t *testing.T) {
	p := ports{&Link{}}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancelExpired := context.WithDeadline(t.Context(), time.Unix(0, 0))
	defer cancelExpired()
	blocked := &socket.Error{Method: "agent.prompt", Code: "agent_blocked", Message: "blocked"}
	closed := &socket.Error{Method: "agent.prompt", Code: "agent_prompt_failed", Message: msgActorClosed}
	for _, tc := range []struct {
		name   string
		err    error
		code   Code
		detail string
		maybe  bool
	}{
		{"lease lost", p.Fail(deliver.LeaseLost, errors.New("broken")), SendFailed, detailLeaseLost, false},
		{"peer gone", p.Fail(deliver.PeerGone, nil), PeerNotFound, detailPeer, false},
		{"another occupant answered", p.Fail(deliver.Changed, nil), SendFailed, detailChanged, true},
		{"lock busy", p.Fail(deliver.LockBusy, errors.New("wait")), SendFailed, detailBusy, false},
		{"not ready", p.Fail(deliver.NotReady, errors.New("starting")), SendFailed, detailStarting, false},
		{"lock dir unsafe", p.Fail(deliver.LockUnusable, panelock.ErrUnsafeDir), SendFailed, detailNoLock, false},
		{"lock disk full", p.Fail(deliver.LockUnusable, fmt.Errorf("x: %w", syscall.ENOSPC)), SendFailed, detailNoSpace, false},
		{"lock io", p.Fail(deliver.LockUnusable, errors.New("io")), SendFailed, detailLockIO, false},
		{"prompt answer lost", p.HerdrFailed(deliver.CallPrompt, socket.AfterWrite(socket.ErrTimeout)), SendFailed, detailMaybeSent, true},
		{"prompt refused busy", p.HerdrFailed(deliver.CallPrompt, blocked), SendFailed, detailBlocked, false},
		{"pane closed while typing", p.HerdrFailed(deliver.CallPrompt, closed), SendFailed, detailClosedDuring, true},
		{"prompt target gone", p.HerdrFailed(deliver.CallPrompt, socket.ErrAgentNotFound), PeerNotFound, detailPeer, false},
		{"prompt cancelled before the write", p.HerdrFailed(deliver.CallPrompt, context.Canceled), SendFailed, detailCancelledSend, false},
		{"probe answer lost: nothing typed", p.HerdrFailed(deliver.CallProbe, socket.AfterWrite(socket.ErrTimeout)), NotInHerdr, detailUnreachable, false},
		{"probe unreachable", p.HerdrFailed(deliver.CallProbe, socket.ErrUnavailable), NotInHerdr, detailUnreachable, false},
		{"outbox unreadable", p.OutboxFailed(errors.New("io")), SendFailed, detailNoOutbox, false},
		{"outbox full for the target", p.OutboxFailed(&outbox.FullError{Target: true}), SendFailed, detailFullTarget, false},
		{"call cancelled while waiting", p.Ended(cancelled), SendFailed, detailCancelledSend, false},
		{"call out of time while waiting", p.Ended(expired), NotInHerdr, detailUnreachable, false},
	} {
		var e *Error
		if !errors.As(tc.err, &e) {
			t.Errorf("%s: got %T %v, want a *link.Error", tc.name, tc.err, tc.err)
			continue
		}
		if e.Code != tc.code || e.Detail != tc.detail {
			t.Errorf("%s: got %s: %s, want %s: %s", tc.name, e.Code, e.Detail, tc.code, tc.detail)
		}
		if got := typedMaybe(tc.err); got != tc.maybe {
			t.Errorf("%s: typedMaybe got %v, want %v", tc.name, got, tc.maybe)
		}
		if got, want := refusedBusy(tc.err), tc.detail == detailBlocked; got != want {
			t.Errorf("%s: refusedBusy got %v, want %v", tc.name, got, want)
		}
	}
}
