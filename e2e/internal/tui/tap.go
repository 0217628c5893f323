package tui

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// A Tap sits between a host and its (fake) model server and records each
// model request as a turn: when it started and ended, whether the host
// read the whole answer or went away in the middle (an interrupted turn),
// and the user input it carried. It can stream answers slowly (one SSE
// event per Delay), which makes a TUI "working" for as long as a test
// needs, and it reports turns starting and ending (Herdr's status
// detection would see the same from the screen).
type Tap struct {
	// URL is the tap's base URL: give it to the host instead of the
	// model server's.
	URL string

	upstream string
	ln       net.Listener
	hs       *http.Server
	client   *http.Client

	mu      sync.Mutex
	delay   time.Duration
	turns   []Turn
	onStart func(Turn)
	onEnd   func(Turn)
	changed chan struct{}
}

// Turn is one model request seen by a [Tap].
type Turn struct {
	Seq   int
	Path  string
	Start time.Time
	End   time.Time // zero while the answer streams
	// Main is a conversation request (it lists tools); hosts also make
	// side requests (titles, summaries, token counts).
	Main bool
	// Completed: the host read the whole answer. Cut: it went away before
	// the end (Codex steering a working turn).
	Completed, Cut bool
	// Users is the user input texts of the conversation, in order, without
	// the context hosts add themselves (system reminders, environment).
	Users []string
	// New is what Users adds to the previous main turn's (the input this
	// turn was started for); set for main turns.
	New []string
}

// NewTap starts a tap in front of the model server at upstream (a base
// URL such as http://127.0.0.1:4242).
func NewTap(upstream string) (*Tap, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &Tap{URL: "http://" + ln.Addr().String(), upstream: strings.TrimSuffix(upstream, "/"), ln: ln,
		client: &http.Client{Transport: &http.Transport{DisableCompression: true}}, changed: make(chan struct{})}
	t.hs = &http.Server{Handler: http.HandlerFunc(t.serve), ReadHeaderTimeout: 10 * time.Second}
	go t.hs.Serve(ln)
	return t, nil
}

// Close stops the tap.
func (t *Tap) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if t.hs.Shutdown(ctx) != nil {
		t.hs.Close()
	}
}

// SetDelay makes every SSE event of the answers wait d (0: none).
func (t *Tap) SetDelay(d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.delay = d
}

// OnTurn sets functions called (outside the tap's lock) when a main turn
// starts and when it ends.
func (t *Tap) OnTurn(start, end func(Turn)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.onStart, t.onEnd = start, end
}

// Turns returns the main turns so far, oldest first.
func (t *Tap) Turns() []Turn {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Turn
	for _, x := range t.turns {
		if x.Main {
			out = append(out, x)
		}
	}
	return out
}

// Wait waits until ok accepts the main turns or ctx ends.
func (t *Tap) Wait(ctx context.Context, ok func([]Turn) bool) error {
	for {
		t.mu.Lock()
		ch := t.changed
		t.mu.Unlock()
		if ok(t.Turns()) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (t *Tap) notify() { // t.mu held
	close(t.changed)
	t.changed = make(chan struct{})
}

// hopHeaders are not forwarded.
var hopHeaders = map[string]bool{"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Transfer-Encoding": true, "Upgrade": true, "Te": true, "Trailer": true}

func (t *Tap) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	main, users := parseRequest(body)
	t.mu.Lock()
	turn := Turn{Seq: len(t.turns), Path: r.URL.Path, Start: time.Now(), Main: main, Users: users}
	if main {
		var prev []string
		for i := len(t.turns) - 1; i >= 0; i-- {
			if t.turns[i].Main {
				prev = t.turns[i].Users
				break
			}
		}
		turn.New = newSince(prev, users)
	}
	t.turns = append(t.turns, turn)
	idx := turn.Seq
	delay, onStart, onEnd := t.delay, t.onStart, t.onEnd
	t.notify()
	t.mu.Unlock()
	if main && onStart != nil {
		onStart(turn)
	}
	completed := t.forward(w, r, body, delay)
	t.mu.Lock()
	t.turns[idx].End = time.Now()
	t.turns[idx].Completed = completed
	t.turns[idx].Cut = !completed && r.Context().Err() != nil
	turn = t.turns[idx]
	t.notify()
	t.mu.Unlock()
	if main && onEnd != nil {
		onEnd(turn)
	}
}

// forward relays the request and streams the answer back, one SSE event
// per delay; it reports whether the whole answer reached the host.
func (t *Tap) forward(w http.ResponseWriter, r *http.Request, body []byte, delay time.Duration) bool {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, t.upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return false
	}
	for k, v := range r.Header {
		if !hopHeaders[k] {
			req.Header[k] = v
		}
	}
	resp, err := t.client.Do(req)
	if err != nil {
		if r.Context().Err() == nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
		}
		return false
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		if !hopHeaders[k] && k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	fl, _ := w.(http.Flusher)
	rd := bufio.NewReader(resp.Body)
	first := true
	for {
		event, err := readEvent(rd)
		if len(event) > 0 {
			if !first && delay > 0 {
				select {
				case <-time.After(delay):
				case <-r.Context().Done():
					return false
				}
			}
			first = false
			if _, werr := w.Write(event); werr != nil {
				return false
			}
			if fl != nil {
				fl.Flush()
			}
		}
		if errors.Is(err, io.EOF) {
			// Every event was written: the host got the whole answer,
			// even if it hung up before the tap saw the end (Codex
			// 0.171.0 closes the stream on response.completed, and a
			// slow tap would otherwise call a finished answer cut).
			return true
		}
		if err != nil {
			return false
		}
	}
}

// maxEvent bounds one SSE event from the model server.
const maxEvent = 64 << 20

var errEventTooLarge = errors.New("tap: an SSE event is larger than 64 MiB")

// readEvent reads through the next blank line (one SSE event), or what
// is left; an event over maxEvent is an error, read no further.
func readEvent(rd *bufio.Reader) ([]byte, error) {
	var ev []byte
	line := 0 // where the current line starts
	for {
		chunk, err := rd.ReadSlice('\n')
		if len(ev)+len(chunk) > maxEvent {
			return nil, errEventTooLarge
		}
		ev = append(ev, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return ev, err
		}
		if len(bytes.TrimRight(ev[line:], "\r\n")) == 0 {
			return ev, nil
		}
		line = len(ev)
	}
}

// newSince is what cur adds after the longest common prefix with prev.
func newSince(prev, cur []string) []string {
	i := 0
	for i < len(prev) && i < len(cur) && prev[i] == cur[i] {
		i++
	}
	return append([]string(nil), cur[i:]...)
}

// hostContext are the openings of user texts hosts add on their own
// (Codex's environment and instructions).
var hostContext = []string{"<environment_context>", "<user_instructions>", "<permissions instructions>", "# AGENTS.md", "<INSTRUCTIONS>", "<user_shell_command>", "<turn_aborted>"}

// hostSections are the sections hosts put into the user's own text
// block, and what separates each from the user's text: Claude Code's
// <system-reminder>, Copilot CLI's <current_datetime>.
var hostSections = []struct{ name, sep string }{{"system-reminder", "\n"}, {"current_datetime", "\n\n"}}

// userText is s without what the host added: the hostSections are cut
// out (the user's input may share their text block), Codex's context
// texts dropped whole. ok is false when nothing of the user's is left.
func userText(s string) (string, bool) {
	for _, tag := range hostSections {
		open, end := "<"+tag.name+">", "</"+tag.name+">"
		for {
			i := strings.Index(s, open)
			if i < 0 {
				break
			}
			j := strings.Index(s[i:], end)
			if j < 0 {
				break
			}
			rest := s[i+j+len(end):]
			rest = strings.TrimPrefix(rest, tag.sep)
			s = s[:i] + rest
		}
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return "", false
	}
	for _, p := range hostContext {
		if strings.HasPrefix(t, p) {
			return "", false
		}
	}
	return s, true
}

// parseRequest reads an Anthropic Messages, OpenAI Responses or Chat
// Completions, or Gemini API request:
// whether it lists tools (a main conversation request) and the texts of
// its user input, in order.
func parseRequest(body []byte) (main bool, users []string) {
	var req struct {
		Tools    []jsonx.RawMessage `json:"tools"`
		Messages []struct {
			Role    string           `json:"role"`
			Content jsonx.RawMessage `json:"content"`
		} `json:"messages"`
		Input    jsonx.RawMessage `json:"input"`
		Contents jsonx.RawMessage `json:"contents"` // the Gemini API
	}
	if jsonx.Unmarshal(body, &req) != nil {
		return false, nil
	}
	add := func(s string) {
		if u, ok := userText(s); ok {
			users = append(users, u)
		}
	}
	for _, m := range req.Messages {
		if m.Role == "user" {
			for _, s := range contentTexts(m.Content, "text") {
				add(s)
			}
		}
	}
	if len(req.Contents) > 0 {
		geminiUsers(req.Contents, add)
	}
	if len(req.Input) > 0 {
		var s string
		if jsonx.Unmarshal(req.Input, &s) == nil {
			add(s)
		} else {
			var items []struct {
				Type    string           `json:"type"`
				Role    string           `json:"role"`
				Content jsonx.RawMessage `json:"content"`
			}
			_ = jsonx.Unmarshal(req.Input, &items)
			for _, it := range items {
				if it.Role == "user" && (it.Type == "" || it.Type == "message") {
					for _, s := range contentTexts(it.Content, "input_text") {
						add(s)
					}
				}
			}
		}
	}
	return len(req.Tools) > 0, users
}

// contentTexts is the texts of a message content: a string, or the
// blocks of type kind.
func contentTexts(raw jsonx.RawMessage, kind string) []string {
	var s string
	if jsonx.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = jsonx.Unmarshal(raw, &blocks)
	var out []string
	for _, b := range blocks {
		if b.Type == kind {
			out = append(out, b.Text)
		}
	}
	return out
}
