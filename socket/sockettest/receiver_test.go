package sockettest_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// receiverWorld is a world whose pane w1:p2 hosts one agent built from
// agent (an AgentSpec as JSON); w1:p1, a shell, has the focus, so a
// finished turn reads done.
func receiverWorld(t *testing.T, agent string) *sockettest.World {
	t.Helper()
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
		{"id":"w1:p1"},
		{"id":"w1:p2","agent":` + agent + `}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func texts(subs []sockettest.Submission) []string {
	out := []string{}
	for _, s := range subs {
		out = append(out, s.Text)
	}
	return out
}

func claudeTag(id int, s string) string {
	return fmt.Sprintf(`<pasted_content id="%d">%s</pasted_content id="%d">`, id, s, id)
}

// step is one thing a receiver test does at a moment (from the start of
// the bubble): a prompt through Herdr's agent.prompt, or a raw write.
type step struct {
	at     time.Duration
	prompt string
	write  string
}

// TestReceiverKinds runs each agent kind through the observed cases of
// hosts-and-delivery §2: what the model gets, when, and what happens to
// the agent's status.
//
// Long: one table: every agent kind against every receiving-end case of
// hosts-and-delivery.md §2.
func TestReceiverKinds(t *testing.T) {
	const long = 20 * time.Second
	tests := []struct {
		name  string
		agent string // AgentSpec JSON
		steps []step
		want  []string // submissions after long
		// queuedAt, when set: at this moment nothing is submitted yet.
		quietUntil time.Duration
		interrupts int
	}{
		// Idle, one delivery: the text as the kind passes it on.
		{"claude idle", `{"kind":"claude","name":"a","status":"idle"}`, []step{{prompt: "A\nB"}}, []string{claudeTag(1, "A\nB")}, 0, 0},
		{"codex idle", `{"kind":"codex","name":"a","status":"idle"}`, []step{{prompt: "A\nB"}}, []string{"A\nB"}, 0, 0},
		{"opencode idle", `{"kind":"opencode","name":"a","status":"idle"}`, []step{{prompt: "A\nB"}}, []string{"A\nB "}, 0, 0},
		{"pi idle", `{"kind":"pi","name":"a","status":"idle"}`, []step{{prompt: "A\nB"}}, []string{"A\nB"}, 0, 0},
		{"plain idle", `{"kind":"gemini","name":"a","status":"idle"}`, []step{{prompt: "A\nB"}}, []string{"A\nB"}, 0, 0},
		// Two deliveries closer than 300 ms: one turn, with the kind's separator.
		{"claude merged", `{"kind":"claude","name":"a","status":"idle"}`, []step{{prompt: "A"}, {at: 100 * time.Millisecond, prompt: "B"}},
			[]string{claudeTag(1, "A") + "\n\n" + claudeTag(2, "B")}, 0, 0},
		{"codex merged", `{"kind":"codex","name":"a","status":"idle"}`, []step{{prompt: "A"}, {at: 100 * time.Millisecond, prompt: "B"}}, []string{"AB"}, 0, 0},
		{"opencode merged", `{"kind":"opencode","name":"a","status":"idle"}`, []step{{prompt: "A"}, {at: 100 * time.Millisecond, prompt: "B"}}, []string{"A B "}, 0, 0},
		{"pi merged", `{"kind":"pi","name":"a","status":"idle"}`, []step{{prompt: "A"}, {at: 100 * time.Millisecond, prompt: "B"}}, []string{"AB"}, 0, 0},
		{"plain merged", `{"kind":"amp","name":"a","status":"idle"}`, []step{{prompt: "A"}, {at: 100 * time.Millisecond, prompt: "B"}}, []string{"AB"}, 0, 0},
		// A user's draft lands in the same turn.
		{"claude draft", `{"kind":"claude","name":"a","status":"idle","draft":"half typed"}`, []step{{prompt: "A"}}, []string{"half typed\n\n" + claudeTag(1, "A")}, 0, 0},
		{"codex draft", `{"kind":"codex","name":"a","status":"idle","draft":"half typed"}`, []step{{prompt: "A"}}, []string{"half typedA"}, 0, 0},
		{"opencode draft", `{"kind":"opencode","name":"a","status":"idle","draft":"half typed"}`, []step{{prompt: "A"}}, []string{"half typedA "}, 0, 0},
		{"pi draft", `{"kind":"pi","name":"a","status":"idle","draft":"half typed"}`, []step{{prompt: "A"}}, []string{"half typedA"}, 0, 0},
		// Working: queued until the turn ends (at 5 s), several deliveries
		// becoming one turn; codex submits each at once, interrupting.
		{"claude working", `{"kind":"claude","name":"a","status":"working","turn_ends_ms":5000}`,
			[]step{{prompt: "A"}, {at: time.Second, prompt: "B"}}, []string{claudeTag(1, "A") + "\n\n" + claudeTag(2, "B")}, 5 * time.Second, 0},
		{"opencode working", `{"kind":"opencode","name":"a","status":"working","turn_ends_ms":5000}`,
			[]step{{prompt: "A"}, {at: time.Second, prompt: "B"}}, []string{"A B "}, 5 * time.Second, 0},
		{"pi working", `{"kind":"pi","name":"a","status":"working","turn_ends_ms":5000}`,
			[]step{{prompt: "A"}, {at: time.Second, prompt: "B"}}, []string{"AB"}, 5 * time.Second, 0},
		{"plain working", `{"kind":"droid","name":"a","status":"working","turn_ends_ms":5000}`,
			[]step{{prompt: "A"}, {at: time.Second, prompt: "B"}}, []string{"AB"}, 5 * time.Second, 0},
		{"codex working", `{"kind":"codex","name":"a","status":"working","turn_ends_ms":5000,"turn_ms":5000}`,
			[]step{{prompt: "A"}, {at: time.Second, prompt: "B"}}, []string{"A", "B"}, 0, 2},
		// Stuck composer: nothing is ever submitted.
		{"claude stuck", `{"kind":"claude","name":"a","status":"idle","stuck":true}`, []step{{prompt: "A"}}, []string{}, 0, 0},
		{"codex stuck", `{"kind":"codex","name":"a","status":"idle","stuck":true}`, []step{{prompt: "A"}}, []string{}, 0, 0},
		// An extra Enter on an empty composer does nothing.
		{"claude extra enter", `{"kind":"claude","name":"a","status":"idle"}`, []step{{prompt: "A"}, {at: time.Second, write: "\r"}, {at: 3 * time.Second, write: "\r\r"}},
			[]string{claudeTag(1, "A")}, 0, 0},
		{"codex extra enter", `{"kind":"codex","name":"a","status":"idle"}`, []step{{prompt: "A"}, {at: 2 * time.Second, write: "\r"}}, []string{"A"}, 0, 0},
		// Two deliveries, each submitted before the next: two turns.
		{"pi two turns", `{"kind":"pi","name":"a","status":"idle","turn_ms":500}`, []step{{prompt: "A"}, {at: 2 * time.Second, prompt: "B"}}, []string{"A", "B"}, 0, 0},
		// Not ready (bracketed paste off): raw typing. Newlines stay in the
		// composer; no paste tags; short text submits.
		{"claude raw", `{"kind":"claude","name":"a","status":"idle","bracketed_paste":false}`, []step{{prompt: "A\nB"}}, []string{"A\nB"}, 0, 0},
		{"opencode raw", `{"kind":"opencode","name":"a","status":"idle","bracketed_paste":false}`, []step{{prompt: "A\nB"}}, []string{"A\nB "}, 0, 0},
		{"pi raw", `{"kind":"pi","name":"a","status":"idle","bracketed_paste":false}`, []step{{prompt: "A\nB"}}, []string{"A\nB"}, 0, 0},
		{"codex raw short", `{"kind":"codex","name":"a","status":"idle","bracketed_paste":false}`, []step{{prompt: "A\nB"}}, []string{"A\nB"}, 0, 0},
		// Codex still reading 4 KB of raw typing swallows the Enter.
		{"codex raw 4KB", `{"kind":"codex","name":"a","status":"idle","bracketed_paste":false}`, []step{{prompt: strings.Repeat("x", 4096)}}, []string{}, 0, 0},
		// A raw carriage return in the text is an Enter: it submits early.
		{"claude raw CR", `{"kind":"claude","name":"a","status":"idle","bracketed_paste":false}`, []step{{prompt: "A\rB"}}, []string{"A", "B"}, 0, 0},
		// A text carrying ESC[201~ ends the paste early: the rest is raw
		// typing (and its "\r" an Enter).
		{"claude paste end in text", `{"kind":"claude","name":"a","status":"idle"}`, []step{{prompt: "a\x1b[201~b"}}, []string{claudeTag(1, "a") + "b"}, 0, 0},
		// (Codex is still reading the raw "b" when the "\r" comes: swallowed.)
		{"codex paste end in text", `{"kind":"codex","name":"a","status":"idle"}`, []step{{prompt: "a\x1b[201~b\rc"}}, []string{"abc"}, 0, 0},
		{"pi paste end in text", `{"kind":"pi","name":"a","status":"idle"}`, []step{{prompt: "a\x1b[201~b\rc"}}, []string{"ab", "c"}, 0, 0},
		// An agent that just started (status unknown) has no bracketed paste yet.
		{"claude starting", `{"kind":"claude","name":"a","status":"unknown"}`, []step{{prompt: "A\nB"}}, []string{"A\nB"}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := receiverWorld(t, tt.agent)
				start := time.Now()
				for _, s := range tt.steps {
					time.Sleep(time.Until(start.Add(s.at)))
					if s.prompt != "" {
						if _, err := w.Prompt("a", s.prompt); err != nil {
							t.Fatal(err)
						}
					}
					if s.write != "" {
						if err := w.Write("w1:p2", s.write); err != nil {
							t.Fatal(err)
						}
					}
				}
				if tt.quietUntil > 0 {
					time.Sleep(time.Until(start.Add(tt.quietUntil)) - time.Millisecond)
					synctest.Wait()
					if subs := w.Submissions("w1:p2"); len(subs) != 0 {
						t.Fatalf("submitted while working: %q", texts(subs))
					}
					if _, queued := w.Composer("w1:p2"); queued == "" {
						t.Fatal("nothing queued while working")
					}
				}
				time.Sleep(time.Until(start.Add(long)))
				synctest.Wait()
				got := texts(w.Submissions("w1:p2"))
				if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") || len(got) != len(tt.want) {
					t.Fatalf("submissions %q, want %q", got, tt.want)
				}
				if n := w.Interrupts("w1:p2"); n != tt.interrupts {
					t.Errorf("interrupts %d, want %d", n, tt.interrupts)
				}
			})
		})
	}
}
