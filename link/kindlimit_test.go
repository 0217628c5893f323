package link_test

import (
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// TestTypedLimitPerKind: a message whose typed text would pass its
// target kind's limit is refused before anything is typed or held, with
// a sentence that names the kind and the limit; one at the limit goes
// through; kinds without a limit take far more.
func TestTypedLimitPerKind(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
	 {"id":"w1:p1","agent":{"kind":"claude","name":"brain","status":"working"}},
	 {"id":"w1:p2","agent":{"kind":"gemini","name":"gem","status":"idle"}},
	 {"id":"w1:p3","agent":{"kind":"qwen","name":"qw","status":"working"}},
	 {"id":"w1:p4","agent":{"kind":"copilot","name":"cop","status":"idle"}},
	 {"id":"w1:p5","agent":{"kind":"claude","name":"cc","status":"idle"}}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w)
	l := mustLink(t, link.Config{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: "w1:p1"})
	// The wrapper of a message from brain to a short name: what the text
	// adds to the message.
	probe, err := link.Wrap(link.Envelope{Protocol: link.Protocol, ID: "hl_mx5ltr0e_w2q2s1uk", From: "brain", To: "gem", Message: "x"})
	if err != nil {
		t.Fatal(err)
	}
	overhead := len(probe) - 1
	tests := []struct {
		to, pane string
		when     link.When
		size     int
		refused  string // the refusal's naming of kind and limit, "" if sent
	}{
		{"gem", "w1:p2", link.WhenIdle, 32<<10 - overhead, ""},
		{"gem", "w1:p2", link.WhenIdle, 32<<10 - overhead + 1, "(Gemini CLI) does not reliably take a typed message this large: at most 32 KiB"},
		{"gem", "w1:p2", link.WhenNow, 48 << 10, "(Gemini CLI) does not reliably take a typed message this large: at most 32 KiB"},
		{"qw", "w1:p3", link.WhenNow, 8<<10 - overhead + 16, "(Qwen Code) does not reliably take a typed message this large: at most 8 KiB"},
		{"cop", "w1:p4", link.WhenIdle, 16<<10 - overhead, ""},
		{"cop", "w1:p4", link.WhenIdle, 33 << 10, "(Copilot CLI) does not reliably take a typed message this large: at most 16 KiB"},
		{"cc", "w1:p5", link.WhenIdle, 200 << 10, ""},
	}
	for _, tc := range tests {
		t.Run(tc.to, func(t *testing.T) {
			before := len(w.Inputs(tc.pane))
			res, err := l.Send(t.Context(), link.SendRequest{To: tc.to, Message: strings.Repeat("a", tc.size), When: tc.when})
			typed := len(w.Inputs(tc.pane)) > before
			if tc.refused == "" {
				if err != nil || res.Status != "sent" || !typed {
					t.Fatalf("send of %d bytes = %s, %v, typed %v; want sent, typed", tc.size, res.Status, err, typed)
				}
				return
			}
			if code(err) != link.SendFailed || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), "nothing was delivered") {
				t.Fatalf("send of %d bytes = %q, %v; want a refusal naming %s", tc.size, res.Status, err, tc.refused)
			}
			if typed {
				t.Error("text reached the pane")
			}
		})
	}
}
