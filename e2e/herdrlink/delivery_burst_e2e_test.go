package herdrlink

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// busyText is what a "now" send whose turn at the target's lock did not
// come within its call's deadline answers.
const busyText = `SEND_FAILED: other deliveries to this agent took the time this call had; nothing was delivered: send it again without "when":"now" to have it wait its turn, or try again in a few seconds`

// Sixteen senders in separate processes, with the default settings
// (-timeout 5s, Herdr's 300 ms Enter, the 400 ms hold), send "now" to one
// pi or codex at once. Deliveries to one target are one at a time, each
// holding it at least the hold, and a send waits its turn only within its
// deadline: as docs/delivery.md says, those whose turn did not come fail
// with the text above and typed nothing; every other arrives once, its
// envelope intact. Sent again without "now", as that text says, each of
// those arrives too: sixteen envelopes, none twice.
func TestSixteenConcurrentNowSenders(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const n = 16
	for _, tc := range []struct {
		kind, status, turn string
		want               map[string]bool // the delivery values of a success
	}{
		{"pi", "idle", `,"turn_ms":30`, map[string]bool{link.DeliverySubmitted: true, link.DeliveryQueued: true}},
		{"codex", "working", "", map[string]bool{link.DeliveryInterrupting: true}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			w, ss := burstSenders(t, n, fmt.Sprintf(`{"agent":{"kind":%q,"name":"target","status":%q%s}}`, tc.kind, tc.status, tc.turn))
			results := sendAll(t, ss, "target", "now")
			sent := map[string]int{} // id → sender index
			var failed []int
			for i, r := range results {
				switch {
				case !r.isErr && tc.want[r.delivery] && link.ValidMessageID(r.id):
					sent[r.id] = i
				case r.isErr && r.text == busyText:
					failed = append(failed, i)
				default:
					t.Fatalf("sender %d: %v, want one of %v with a valid id, or %q", i+1, r, tc.want, busyText)
				}
			}
			t.Logf("%s: %d of %d delivered at once, %d told to send again", tc.kind, len(sent), n, len(failed))
			if len(sent) == 0 {
				t.Fatal("no send delivered")
			}
			target := paneOf(w, "target")
			check := func(want map[string]int) { t.Helper(); arrivedOnce(t, w, target, want) }
			check(sent)
			time.Sleep(time.Second) // nothing a failed send typed arrives late
			check(sent)
			if tc.kind == "codex" {
				// A working codex stays busy for the resends: let its
				// turn end so that held messages are typed.
				if err := w.SetStatus(target, "idle"); err != nil {
					t.Fatal(err)
				}
			}
			for _, i := range failed {
				r := sendWhen(t, ss[i], "target", fmt.Sprintf("message %d from s%d\nsecond line {\"protocol\":\"herdr-link/1\"}", i, i+1), "")
				if r.isErr || !link.ValidMessageID(r.id) {
					t.Fatalf("sender %d again: %v, want a delivery with a valid id", i+1, r)
				}
				sent[r.id] = i
			}
			check(sent)
			if len(sent) != n {
				t.Errorf("%d messages, want %d", len(sent), n)
			}
		})
	}
}

// burstSenders serves a world of n idle claude senders s1…sn and target
// (a pane's JSON), and connects one herdr-link process with the default
// settings to each sender, activated.
func burstSenders(t *testing.T, n int, target string) (*sockettest.World, []session) {
	t.Helper()
	var panes []string
	for i := 1; i <= n; i++ {
		panes = append(panes, fmt.Sprintf(`{"agent":{"kind":"claude","name":"s%d","status":"idle"}}`, i))
	}
	panes = append(panes, target)
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[` + strings.Join(panes, ",") + `]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w)
	ss := make([]session, n)
	var wg sync.WaitGroup
	for i := range ss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ss[i] = connectArgs(t, srv, paneOf(w, fmt.Sprintf("s%d", i+1)), []string{"-no-bootstrap"})
		}()
	}
	wg.Wait()
	for _, s := range ss {
		call(t, s, "herdr_link", nil)
	}
	return w, ss
}

// arrivedOnce waits until pane's submissions hold exactly the envelopes of
// want (id → sender index, as sendAll writes them), each once and intact;
// any other envelope, or one twice, fails at once.
func arrivedOnce(t *testing.T, w *sockettest.World, pane string, want map[string]int) {
	t.Helper()
	deadline := time.Now().Add(hangBound)
	for {
		got := map[string]int{}
		for _, s := range w.Submissions(pane) {
			for _, e := range link.ExtractAll(s.Text) {
				got[e.ID]++
				i, ok := want[e.ID]
				if !ok || e.From != fmt.Sprintf("s%d", i+1) || e.Message != fmt.Sprintf("message %d from s%d\nsecond line {\"protocol\":\"herdr-link/1\"}", i, i+1) {
					t.Fatalf("envelope %s from %s with %q, want one of the messages delivered", e.ID, e.From, e.Message)
				}
				if got[e.ID] > 1 {
					t.Fatalf("message %s arrived twice", e.ID)
				}
			}
		}
		if len(got) == len(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages arrived", len(got), len(want))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
