//go:build unix

package realherdr

import (
	"fmt"
	"testing"

	"github.com/herdr-link/herdr-link/e2e/internal/tui"
	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link"
)

// requests: a request answered by the recipient's own herdr-link ends
// replied; one whose recipient's turn ends without an answer ends handled,
// and a notice saying so is the sender's next turn.
func (l *lane) requests(t *testing.T, alice, bob session) {
	id := alice.send(t, "bob", "what is 2+2?")["id"].(string)
	env, ok := link.Extract(l.turnWith(t, tui.Codex, id, deliverBound))
	if !ok {
		t.Fatal("no envelope in bob's turn")
	}
	bob.send(t, "alice", "4", "reply_to", env.ID)
	if st := waitState(t, alice, id, 30); st != outbox.OutcomeReplied {
		t.Fatalf("wait for the replied request: got %s, want %s", st, outbox.OutcomeReplied)
	}
	l.idle(t, "alice")
	l.idle(t, "bob")

	id = alice.send(t, "bob", "no answer needed")["id"].(string)
	l.turnWith(t, tui.Codex, id, deliverBound)
	if st := waitState(t, alice, id, 30); st != outbox.OutcomeHandled {
		t.Fatalf("wait for the unanswered request: got %s, want %s", st, outbox.OutcomeHandled)
	}
	n := l.noticeTurn(t, tui.Claude, id, deliverBound)
	if n.Notice != outbox.OutcomeHandled || n.Peer != "bob" {
		t.Fatalf("notice %s from %s, want %s from bob", n.Notice, n.Peer, outbox.OutcomeHandled)
	}
	l.idle(t, "alice")
	l.idle(t, "bob")
}

// waitState calls herdr_link_wait and returns the request's state.
func waitState(t *testing.T, s session, id string, secs float64) string {
	t.Helper()
	text, isErr, sc := s.call(t, "herdr_link_wait", map[string]any{"id": id, "timeout_s": secs})
	if isErr || sc["id"] != id {
		t.Fatalf("wait %s: %s", id, text)
	}
	return fmt.Sprint(sc["state"])
}
