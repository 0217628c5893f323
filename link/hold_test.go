package link_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket"
)

// A when-idle request to a target that can take it is recorded once,
// before its prompt, and then: kept and held when Herdr refuses the
// prompt as busy (nothing typed), forgotten when Herdr refuses it
// otherwise (nothing typed, nothing held), kept when Herdr's answer was
// lost after the write (it may have been delivered). The lock is free
// once the send returned, the hold past Herdr's Enter over.
func TestSendIdlePromptRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		prompt   error
		delivery string // "" when the send fails
		detail   string // the failure's detail, in part
		record   bool   // a pending request record is left
		held     bool   // the message is held
	}{
		{"refused busy: held, its record kept", &socket.Error{Method: "agent.prompt", Code: "agent_blocked", Message: "blocked"}, link.DeliveryHeld, "", true, true},
		{"refused otherwise: nothing left", &socket.Error{Method: "agent.prompt", Code: "agent_prompt_failed", Message: "no capacity"}, "", "Herdr did not accept the message", false, false},
		{"answer lost after the write: may have been delivered", socket.AfterWrite(socket.ErrTimeout), "", "it may have been delivered", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st, err := outbox.Open(t.TempDir(), "sim")
				if err != nil {
					t.Fatal(err)
				}
				f := newFake("codex", "idle")
				var atPrompt []outbox.Entry // the request records on disk at the prompt
				f.promptFn = func() error {
					atPrompt = pending(t, st)
					return tc.prompt
				}
				lk := newLocker()
				l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Locker: lk, Outbox: st})
				res, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "x"})
				if err := l.Wait(t.Context()); err != nil {
					t.Fatal(err)
				}
				switch {
				case tc.delivery != "" && (err != nil || res.Delivery != tc.delivery):
					t.Fatalf("send: got %q, %v; want %q", res.Delivery, err, tc.delivery)
				case tc.delivery == "":
					var e *link.Error
					if !errors.As(err, &e) || e.Code != link.SendFailed || !strings.Contains(e.Detail, tc.detail) {
						t.Fatalf("send: got %v, want %s saying %q", err, link.SendFailed, tc.detail)
					}
				}
				if f.prompts != 1 || len(atPrompt) != 1 {
					t.Fatalf("prompts: got %d, with %d request records on disk; want 1, with 1", f.prompts, len(atPrompt))
				}
				if left := pending(t, st); tc.record && (len(left) != 1 || left[0].Seq != atPrompt[0].Seq) {
					t.Errorf("request records after: got seqs %v, want [%d] (the one of the prompt, kept)", seqs(left), atPrompt[0].Seq)
				}
				if lk.isHeld() {
					t.Error("lock: got held, want free")
				}
				ents, err := st.List()
				if err != nil {
					t.Fatal(err)
				}
				var records, held int
				for _, e := range ents {
					switch {
					case e.Pending():
						records++
					case e.Held():
						held++
					default:
						t.Errorf("entry %s: state %c, want a pending request or a held message", e.ID, e.State)
					}
				}
				if want := b2i(tc.record); records != want {
					t.Errorf("pending request records: got %d, want %d", records, want)
				}
				if want := b2i(tc.held); held != want {
					t.Errorf("held messages: got %d, want %d", held, want)
				}
			})
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pending lists st's pending request records.
func pending(t *testing.T, st *outbox.Store) []outbox.Entry {
	t.Helper()
	ents, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	var out []outbox.Entry
	for _, e := range ents {
		if e.Pending() {
			out = append(out, e)
		}
	}
	return out
}

func seqs(ents []outbox.Entry) []int64 {
	out := make([]int64, len(ents))
	for i, e := range ents {
		out[i] = e.Seq
	}
	return out
}

// heldOnLock is a Locker that holds a message for the target of key
// (another sender's) as it gives the lock: one held between a send's look
// before the lock and its look under it.
type heldOnLock struct {
	*fakeLocker
	st *outbox.Store
}

func (h heldOnLock) Lock(ctx context.Context, key string, d time.Duration) (link.Lease, error) {
	m := outbox.Message{ID: "hl_a1_b2", To: "reviewer", From: "writer", TargetKey: key, FromKey: "term_3", PaneID: "w1:p2", Expires: time.Now().Add(time.Hour), Text: "x"}
	if _, err := h.st.Add(m, time.Now()); err != nil {
		return nil, err
	}
	return h.fakeLocker.Lock(ctx, key, d)
}

// A when-idle send never overtakes a message held for its target before
// it, whether held before the send looked (seen without the lock) or
// while it took the lock (seen under it): it is held behind, nothing
// typed, and the lock is free again.
func TestSendIdleBehindHeld(t *testing.T) {
	for _, underLock := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			st, err := outbox.Open(t.TempDir(), "sim")
			if err != nil {
				t.Fatal(err)
			}
			f := newFake("codex", "idle")
			lk := newLocker()
			var locker link.Locker = lk
			if underLock {
				locker = heldOnLock{lk, st}
			} else {
				m := outbox.Message{ID: "hl_a1_b2", To: "reviewer", From: "writer", TargetKey: "term_2", FromKey: "term_3", PaneID: "w1:p2", Expires: time.Now().Add(time.Hour), Text: "x"}
				if _, err := st.Add(m, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Locker: locker, Outbox: st})
			res, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "y"})
			if err != nil || res.Delivery != link.DeliveryHeld {
				t.Fatalf("held under the lock %v: send got %q, %v; want %q", underLock, res.Delivery, err, link.DeliveryHeld)
			}
			if f.prompts != 0 || lk.isHeld() {
				t.Errorf("held under the lock %v: got %d prompts, lock held %v; want 0, false", underLock, f.prompts, lk.isHeld())
			}
			e, err := st.Find(res.ID)
			if err != nil {
				t.Fatal(err)
			}
			m, err := st.Read(e)
			if err != nil || m.Reason != "messages held before" {
				t.Errorf("held under the lock %v: reason got %q, %v; want %q", underLock, m.Reason, err, "messages held before")
			}
		})
	}
}
