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

// A request forgotten by another process before it is ended is not
// ended: EndRequest says it is not found, and no process lists it.
func TestEndRequestOfAForgottenRecord(t *testing.T) {
	s := open(t)
	o := another(t, s)
	r, err := s.AddRequest(Request{ID: "q", To: "rev", From: "brain", TargetKey: "term_rev", FromKey: "term_brain", Expires: t0.Add(time.Hour)}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.ForgetRequest(r); err != nil {
		t.Fatal(err)
	}
	got, ended, err := s.EndRequest(r.Entry(), OutcomeHandled, t0, nil)
	if !errors.Is(err, ErrNotFound) || ended {
		t.Fatalf("EndRequest of a forgotten record: got %q, %v, %v, want ErrNotFound, not ended", got.Outcome, ended, err)
	}
	for name, st := range map[string]*Store{"this process": s, "another process": o, "a new one": another(t, s)} {
		if got := ids(list(t, st)); got != "" {
			t.Errorf("listing of %s: got %q, want none", name, got)
		}
		if _, err := st.FindRequest("q"); !errors.Is(err, ErrNotFound) {
			t.Errorf("FindRequest in %s: got %v, want ErrNotFound", name, err)
		}
	}
}
