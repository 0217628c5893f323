package link

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/link/courier"
)

// TestCourierPortsErrors: every failure of the courier reaches the model
// as the code and detail link gave it before the courier was a package of
// its own.
func TestCourierPortsErrors(t *testing.T) {
	p := courierPorts{&Link{}}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancelExpired := context.WithDeadline(t.Context(), time.Unix(0, 0))
	defer cancelExpired()
	for _, tc := range []struct {
		name   string
		err    error
		code   Code
		detail string
	}{
		{"no outbox to hold in", p.Fail(courier.NoOutbox, nil), SendFailed, detailNoOutbox},
		{"not a request of the caller", p.Fail(courier.NoRequest, errors.New("not found")), InvalidArgument, detailNoRequest},
		{"outbox unreadable", p.OutboxFailed(errors.New("io")), SendFailed, detailNoOutbox},
		{"wait cancelled", p.Ended(cancelled), NotInHerdr, detailCancelled},
		{"wait out of time", p.Ended(expired), NotInHerdr, detailUnreachable},
	} {
		var e *Error
		if !errors.As(tc.err, &e) {
			t.Errorf("%s: got %T %v, want a *link.Error", tc.name, tc.err, tc.err)
			continue
		}
		if e.Code != tc.code || e.Detail != tc.detail {
			t.Errorf("%s: got %s: %s, want %s: %s", tc.name, e.Code, e.Detail, tc.code, tc.detail)
		}
	}
}
