//go:build unix

package herdrlink

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// rawLine is one JSON-RPC message from the server.
type rawLine struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Progress      float64         `json:"progress"`
	} `json:"params"`
	Result struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	raw string
}

// rawReader reads s's output lines as they come.
func rawReader(s *server) <-chan rawLine {
	out := make(chan rawLine, 64)
	go func() {
		defer close(out)
		for {
			l, err := s.out.ReadString('\n')
			if err != nil {
				return
			}
			var m rawLine
			_ = json.Unmarshal([]byte(l), &m)
			m.raw = l
			out <- m
		}
	}()
	return out
}

// readUntil reads lines until one answers id, for at most d; it returns
// that answer and the lines before it (ok false at the deadline).
// rawLines lists the lines as read, for a failure message.
func rawLines(ls []rawLine) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.raw
	}
	return out
}

func readUntil(lines <-chan rawLine, id string, d time.Duration) (rawLine, []rawLine, bool) {
	var before []rawLine
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return rawLine{}, before, false
			}
			if string(l.ID) == id {
				return l, before, true
			}
			before = append(before, l)
		case <-timer.C:
			return rawLine{}, before, false
		}
	}
}

// result decodes the JSON of an answer's text content.
func (l rawLine) result(t *testing.T) map[string]any {
	t.Helper()
	if l.Result.IsError || len(l.Result.Content) == 0 {
		t.Fatalf("answer %s", l.raw)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(l.Result.Content[0].Text), &m); err != nil {
		t.Fatalf("answer %s: %v", l.raw, err)
	}
	return m
}

// herdr_link_wait over MCP, raw JSON-RPC on the binary's stdio: pending
// at its timeout_s; ended at once by notifications/cancelled, with no
// answer for the cancelled id ever; MCP progress every 5 s when the call
// carries _meta.progressToken.
//
// Long: one session's script; each step needs the request the first one
// made still pending.
func TestWaitOverMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Parallel()
	srv, w := reqServer(t)
	s := startServerArgs(t, reqFlags, srv.Env(pane(t, w, "s1"))...)
	lines := rawReader(s)
	ask := func(id, method, params string) rawLine {
		t.Helper()
		s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
		l, _, ok := readUntil(lines, id, 10*time.Second)
		if !ok {
			t.Fatalf("no answer to %s", id)
		}
		return l
	}
	ask("1", "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`)
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	sent := ask("2", "tools/call", `{"name":"herdr_link","arguments":{"action":"send","arguments":{"to":"slow","message":"a long job"}}}`).result(t)
	id, _ := sent["id"].(string)
	if sent["status"] != "sent" || id == "" {
		t.Fatalf("send %v", sent)
	}
	// pending at its timeout.
	start := time.Now()
	got := ask("3", "tools/call", fmt.Sprintf(`{"name":"herdr_link","arguments":{"action":"wait","arguments":{"id":%q,"timeout_s":0.5}}}`, id)).result(t)
	took := time.Since(start)
	if got["state"] != "pending" || got["id"] != id || got["peer"] != "slow" || took < 500*time.Millisecond || took > 3*time.Second {
		t.Fatalf("wait with timeout_s 0.5: %v after %v", got, took)
	}
	t.Logf("pending after %v (timeout_s 0.5)", took.Round(time.Millisecond))
	// Cancelled: the next answer is the ping's, and the wait's never comes.
	s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":"w4","method":"tools/call","params":{"name":"herdr_link","arguments":{"action":"wait","arguments":{"id":%q,"timeout_s":30}}}}`, id))
	time.Sleep(200 * time.Millisecond)
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w4","reason":"user"}}`)
	start = time.Now()
	s.send(t, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if _, before, ok := readUntil(lines, "5", 5*time.Second); !ok || len(before) != 0 {
		t.Fatalf("ping after the cancel: answered %v, lines before it %q; want the answer first", ok, rawLines(before))
	}
	t.Logf("ping answered %v after the cancel", time.Since(start).Round(time.Millisecond))
	// Progress, through the Tier-1 tool: every 5 s, with the call's token.
	ask("6", "tools/call", `{"name":"herdr_link","arguments":{}}`)
	start = time.Now()
	s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"herdr_link_wait","arguments":{"id":%q,"timeout_s":6},"_meta":{"progressToken":"tok-7"}}}`, id))
	l, before, ok := readUntil(lines, "7", 10*time.Second)
	took = time.Since(start)
	if !ok || l.result(t)["state"] != "pending" || took < 6*time.Second {
		t.Fatalf("wait with progress: %v %s after %v", ok, l.raw, took)
	}
	var progress []rawLine
	for _, b := range before {
		switch {
		case string(b.ID) == `"w4"`:
			t.Fatalf("the cancelled wait answered: %s", b.raw)
		case b.Method == "notifications/progress":
			progress = append(progress, b)
		}
	}
	if len(progress) != 1 || string(progress[0].Params.ProgressToken) != `"tok-7"` || progress[0].Params.Progress < 4.9 {
		t.Fatalf("progress %q; want one for tok-7 at ≥ 4.9; lines before the answer %q", rawLines(progress), rawLines(before))
	}
	t.Logf("progress %s; pending after %v", strings.TrimSpace(progress[0].raw), took.Round(time.Millisecond))
	// At the end of input nothing more comes, the cancelled wait's answer
	// least of all.
	s.in.Close()
	for l := range lines {
		if string(l.ID) == `"w4"` {
			t.Fatalf("the cancelled wait answered: %s", l.raw)
		}
	}
}
