package sockettest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// FuzzReceiverKeepsText drives a modelled agent with a random mix of
// prompts, status changes and time, and checks that nothing is lost,
// added or reordered: for the kinds that glue text verbatim, the turns,
// then the composer and the queue, spell exactly the accepted prompts.
func FuzzReceiverKeepsText(f *testing.F) {
	f.Add([]byte("p0p1t5s1p2t9"), uint8(0))
	f.Add([]byte("s1p0t1p1t1s0t9p2s2p3t9"), uint8(1))
	f.Add([]byte("p0p1p2p3t0t0t0t0t9"), uint8(2))
	f.Fuzz(func(t *testing.T, ops []byte, kindSel uint8) {
		if len(ops) > 200 {
			ops = ops[:200]
		}
		kind := []string{"codex", "pi", "gemini"}[int(kindSel)%3]
		fc := sockettest.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
		var spec sockettest.WorldSpec
		if err := jsonx.Unmarshal([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[{"id":"w1:p1"},
			{"id":"w1:p2","agent":{"kind":"`+kind+`","name":"a","status":"idle","turn_ms":700}}]}]}]}`), &spec); err != nil {
			t.Fatal(err)
		}
		w, err := sockettest.NewWorldClock(spec, fc)
		if err != nil {
			t.Fatal(err)
		}
		statuses := []string{"idle", "working", "blocked", "done", "unknown"}
		var sent strings.Builder
		n := 0
		for i := 0; i+1 < len(ops); i += 2 {
			arg := int(ops[i+1])
			switch ops[i] % 3 {
			case 0: // a prompt (refused while blocked)
				n++
				text := "<" + strings.Repeat("x", arg%7) + string(rune('a'+n%26)) + ">"
				if _, err := w.Prompt("a", text); err == nil {
					sent.WriteString(text)
				}
			case 1: // detection reports a status
				_ = w.SetStatus("w1:p2", statuses[arg%len(statuses)])
			case 2: // time passes
				fc.Advance(time.Duration(arg%50) * 37 * time.Millisecond)
			}
		}
		// Settle: the agent idle, every Enter sent, every turn over.
		_ = w.SetStatus("w1:p2", "idle")
		for i := 0; i < 5; i++ {
			fc.Advance(time.Minute)
			_ = w.SetStatus("w1:p2", "idle")
		}
		var got strings.Builder
		for _, s := range w.Submissions("w1:p2") {
			got.WriteString(s.Text)
		}
		comp, queued := w.Composer("w1:p2")
		got.WriteString(comp)
		got.WriteString(queued)
		if got.String() != sent.String() {
			t.Fatalf("%s received %q (+ composer %q, queue %q), sent %q", kind, got.String(), comp, queued, sent.String())
		}
		if queued != "" {
			t.Fatalf("input still queued after the agent went idle: %q", queued)
		}
	})
}
