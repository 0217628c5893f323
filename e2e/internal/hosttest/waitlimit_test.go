package hosttest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestWaitLimitFromTap(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	line := func(s float64, dir, msg string) TapLine {
		return TapLine{Time: t0.Add(time.Duration(s * float64(time.Second))), Dir: dir, PID: 7, Msg: json.RawMessage(msg)}
	}
	call := line(0, "in", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"herdr_link","arguments":{"action":"wait","arguments":{"id":"hl_a_b","timeout_s":50}},"_meta":{"progressToken":3}}}`)
	progress := line(5, "out", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":5}}`)
	answer := line(50, "out", `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`)
	tests := []struct {
		name    string
		held    bool
		lines   []TapLine
		model   time.Duration
		token   string
		verdict string
	}{
		{"passed on", false, []TapLine{call, progress, answer}, 50 * time.Second, "3", "result passed on (answered after 50s)"},
		{"cancelled by the host", false, []TapLine{call, progress,
			line(20, "in", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"timeout"}}`)},
			20 * time.Second, "3", "host cancelled the call after 20s"},
		{"host's own result, herdr-link not told", false, []TapLine{call, answer}, 20 * time.Second, "3",
			"host gave the model its own result after 20s (herdr-link not told)"},
		{"held and released", true, []TapLine{call, answer, line(50, "hold", `"answer held"`), line(150, "hold", `"answer released"`)},
			150 * time.Second, "3", "held answer passed on (released after 2m30s)"},
		{"no wait call", false, []TapLine{line(0, "in", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"herdr_link_send"}}`)},
			0, "", "no wait call reached herdr-link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &WaitLimit{held: tt.held}
			w.fromTap(tt.lines)
			if tt.model > 0 {
				w.ModelAfter, w.ModelSaw = tt.model, `{"state":"pending"}`
			}
			if w.ProgressToken != tt.token {
				t.Errorf("token %q, want %q", w.ProgressToken, tt.token)
			}
			if got := w.Verdict(); got != tt.verdict {
				t.Errorf("verdict %q, want %q", got, tt.verdict)
			}
			if !strings.Contains(WaitLimitTable([]*WaitLimit{w}), tt.verdict) {
				t.Errorf("the table lacks the verdict")
			}
		})
	}
}
