package link_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link"
)

// A request its sender's process recorded and then died with, before the
// prompt reached the recipient (or before it recorded the typing): no
// held message, no turn ever shows. Another process adopts it and, once
// no turn showed for the call timeout and the grace, ends it handled with
// a notice, instead of leaving it pending until the request lifetime.
func TestOrphanRequestWithNoTurnEnds(t *testing.T) { synctest.Test(t, testOrphanRequestWithNoTurnEnds) }

func testOrphanRequestWithNoTurnEnds(t *testing.T) {
	e := newCourierEnv(t)
	dead := e.ledgerLink(t, "w1:p1")
	quick, _ := e.w.Agent("quick")
	brain, _ := e.w.Agent("brain")
	now := time.Now()
	id := link.NewMessageID(now)
	_, err := dead.Config().Outbox.AddRequest(outbox.Request{
		ID: id, Expires: now.Add(time.Hour), To: "quick", From: "brain",
		TargetKey: quick.TerminalID, FromKey: brain.TerminalID,
		PaneID: quick.PaneID, TerminalID: quick.TerminalID, Kind: "claude", WorkspaceID: quick.WorkspaceID,
		FromPane: brain.PaneID, FromKind: "claude", FromWorkspace: brain.WorkspaceID,
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	dead.Config().Outbox.Release() // its process is gone
	l := e.ledgerLink(t, "w1:p1")
	l = relink(t, l, func(c *link.Config) { c.CallTimeout = 300 * time.Millisecond })
	run(t, l)
	w, err := l.WaitReply(t.Context(), id, 10*time.Second, nil)
	if err != nil || w.State != outbox.OutcomeHandled {
		t.Fatalf("wait = %s, %v; want %s", w.State, err, outbox.OutcomeHandled)
	}
	eventually(t, "one notice", func() bool { return len(notices(e, "w1:p1")) == 1 })
	if n := notices(e, "w1:p1")[0]; n.About != id || n.Notice != outbox.OutcomeHandled || n.Peer != "quick" {
		t.Fatalf("notice %s about %s from %s, want %s about %s from quick", n.Notice, n.About, n.Peer, outbox.OutcomeHandled, id)
	}
	if len(e.w.Submissions("w1:p6")) != 0 {
		t.Fatal("the orphan was typed")
	}
}
