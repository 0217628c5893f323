package outbox

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// Request records count towards MaxMessages with held messages (a held
// request once): a full store refuses a new request, after the records
// of answered requests made what room they could.
func TestRequestsCountInCaps(t *testing.T) {
	s := open(t)
	s.MaxMessages = 3
	req := func(id string) error {
		_, err := s.AddRequest(Request{ID: id, To: "rev", From: "brain", TargetKey: "term_rev", FromKey: "term_brain", Expires: t0.Add(time.Hour)}, t0)
		return err
	}
	for i := range 3 {
		if err := req(fmt.Sprintf("q%d", i)); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if err := req("q3"); !errors.Is(err, ErrFull) {
		t.Fatalf("a fourth pending request: %v, want ErrFull", err)
	}
	if _, err := s.Add(msg("h1", "rev", "brain", "x"), t0); !errors.Is(err, ErrFull) {
		t.Fatalf("a held message in a store full of requests: %v, want ErrFull", err)
	}
	// A held request counts once: its message and its record.
	e, _ := s.FindRequest("q0")
	if _, err := s.Add(msg("q0", "rev", "brain", "x"), t0); err != nil {
		t.Fatalf("holding the message of a recorded request: %v", err)
	}
	// An answered request's record makes room.
	if _, _, err := s.EndRequest(e, OutcomeHandled, t0, nil); err != nil {
		t.Fatal(err)
	}
	if err := req("q4"); err != nil {
		t.Fatalf("with an answered record to drop: %v", err)
	}
	if _, err := s.FindRequest("q0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the answered record made no room: %v", err)
	}
	if got := ids(list(t, s)); got != "q1/q q2/q q0/h q4/q" {
		t.Errorf("List = %s", got)
	}
}
