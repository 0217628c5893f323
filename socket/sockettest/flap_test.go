package sockettest_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// A prompt flap: working at once, back to idle before the Enter, and the
// text is still submitted as one turn after the Enter. In a synctest
// bubble on an in-memory server: the reads fall exactly between the
// flap's 100 ms, the 300 ms Enter and the submission.
func TestPromptFlap(t *testing.T) { synctest.Test(t, testPromptFlap) }

func testPromptFlap(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[{"id":"w1:p1","agent":{"kind":"claude","name":"a","status":"idle","turn_ms":30,"submit_ms":30}}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := sockettest.NewUnstartedServer(w)
	srv.Memory = true
	srv.SubmitDelay = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()
	if err := w.SetPromptFlap("w1:p1", 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	c := srv.Client()
	before, err := c.AgentGet(ctx, "w1:p1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AgentPrompt(ctx, schema.AgentPromptParams{Target: "w1:p1", Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	a, _ := c.AgentGet(ctx, "w1:p1")
	if a.AgentStatus != schema.AgentStatusWorking || a.StateChangeSeq != before.StateChangeSeq+1 {
		t.Fatalf("right after the prompt: %s seq %d (before %d)", a.AgentStatus, a.StateChangeSeq, before.StateChangeSeq)
	}
	time.Sleep(200 * time.Millisecond)
	a, _ = c.AgentGet(ctx, "w1:p1")
	if a.AgentStatus != schema.AgentStatusIdle || a.StateChangeSeq != before.StateChangeSeq+2 || len(w.Submissions("w1:p1")) != 0 {
		t.Fatalf("after the flap: %s seq %d, %d submissions", a.AgentStatus, a.StateChangeSeq, len(w.Submissions("w1:p1")))
	}
	time.Sleep(400 * time.Millisecond)
	if subs := w.Submissions("w1:p1"); len(subs) != 1 || subs[0].Text == "" {
		t.Fatalf("submissions %q, want one with text", texts(subs))
	}
}
