package tui_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/tui"
)

// eventServer answers every request with n SSE events at once.
func eventServer(t *testing.T, n int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("content-type", "text/event-stream")
		for i := 0; i < n; i++ {
			fmt.Fprintf(w, "event: e\ndata: {\"i\":%d}\n\n", i)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newTap(t *testing.T, upstream string) *tui.Tap {
	tap, err := tui.NewTap(upstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tap.Close)
	return tap
}

func post(ctx context.Context, url, body string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

const reminder = "<system-reminder>\nbe nice\n</system-reminder>\n"

// turnLines shows turns one a line for a failure message.
func turnLines(ts []tui.Turn) string {
	var b strings.Builder
	for _, x := range ts {
		fmt.Fprintf(&b, "\n  #%d main %v, completed %v, cut %v, new %q", x.Seq, x.Main, x.Completed, x.Cut, x.New)
	}
	return b.String()
}

func TestTapTurns(t *testing.T) {
	up := eventServer(t, 4)
	tap := newTap(t, up.URL)
	var mu sync.Mutex
	var events []string
	tap.OnTurn(func(x tui.Turn) {
		mu.Lock()
		events = append(events, fmt.Sprintf("start %d", x.Seq))
		mu.Unlock()
	}, func(x tui.Turn) {
		mu.Lock()
		events = append(events, fmt.Sprintf("end %d %v", x.Seq, x.Completed))
		mu.Unlock()
	})
	ctx := t.Context()
	bodies := []string{
		// Claude Code's first turn: a reminder sharing the paste's block.
		`{"tools":[{"name":"x"}],"messages":[{"role":"user","content":[{"type":"text","text":` + q(reminder+"\n\n<pasted_content id=\"a\">\nhello\n</pasted_content id=\"a\">\n") + `}]}]}`,
		// A side request (no tools): not a turn.
		`{"messages":[{"role":"user","content":"title please"}]}`,
		// Two queued pastes: one user message, two blocks.
		`{"tools":[{"name":"x"}],"messages":[{"role":"user","content":[{"type":"text","text":` + q(reminder+"\n\n<pasted_content id=\"a\">\nhello\n</pasted_content id=\"a\">\n") + `}]},
		  {"role":"assistant","content":[{"type":"text","text":"ok"}]},
		  {"role":"user","content":[{"type":"text","text":"two\n"},{"type":"text","text":"three"},{"type":"tool_result","content":"x"}]}]}`,
		// Codex: context first, then two user messages in a row (a steer).
		`{"tools":[{"type":"function","name":"x"}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd</environment_context>"}]},
		  {"type":"message","role":"user","content":[{"type":"input_text","text":"first"}]},
		  {"type":"message","role":"user","content":[{"type":"input_text","text":"steer"}]}]}`,
	}
	for _, b := range bodies {
		got, err := post(ctx, tap.URL+"/v1/messages", b)
		if err != nil || strings.Count(got, "\n\n") != 4 {
			t.Fatalf("answer %q, %v", got, err)
		}
	}
	turns := tap.Turns()
	if len(turns) != 3 {
		t.Fatalf("%d main turns, want 3:%s", len(turns), turnLines(turns))
	}
	want := [][]string{
		{"\n\n<pasted_content id=\"a\">\nhello\n</pasted_content id=\"a\">\n"},
		{"two\n", "three"},
		{"first", "steer"},
	}
	for i, x := range turns {
		if !reflect.DeepEqual(x.New, want[i]) || !x.Completed || x.Cut || x.End.Before(x.Start) {
			t.Errorf("turn %d: new %q, completed %v, cut %v, %v from start to end; want new %q, completed, not cut, an end after the start",
				i, x.New, x.Completed, x.Cut, x.End.Sub(x.Start), want[i])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if w := []string{"start 0", "end 0 true", "start 2", "end 2 true", "start 3", "end 3 true"}; !reflect.DeepEqual(events, w) {
		t.Errorf("events %q, want %q", events, w)
	}
}

func q(s string) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%q", s)
	return b.String()
}

// TestTapSlowAndCut: with a delay the answer streams slowly, and a host
// that goes away mid-answer makes a cut turn.
func TestTapSlowAndCut(t *testing.T) {
	up := eventServer(t, 5)
	tap := newTap(t, up.URL)
	tap.SetDelay(200 * time.Millisecond)
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "POST", tap.URL+"/v1/responses", strings.NewReader(`{"tools":[{"name":"x"}],"input":"go"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf) // the first event comes at once
	if !strings.Contains(string(buf[:n]), `"i":0`) {
		t.Fatalf("first read %q", buf[:n])
	}
	if err := tap.Wait(t.Context(), func(ts []tui.Turn) bool { return len(ts) == 1 && ts[0].End.IsZero() }); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	wctx, wcancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer wcancel()
	if err := tap.Wait(wctx, func(ts []tui.Turn) bool { return len(ts) == 1 && !ts[0].End.IsZero() }); err != nil {
		t.Fatal(err)
	}
	if x := tap.Turns()[0]; !x.Cut || x.Completed || !reflect.DeepEqual(x.New, []string{"go"}) {
		t.Fatalf("turn new %q, cut %v, completed %v; want new [go], cut, not completed", x.New, x.Cut, x.Completed)
	}
}
