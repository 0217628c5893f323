// Package fakemodel is a scripted stand-in for the model APIs agent hosts
// talk to: the Anthropic Messages API (/v1/messages), the OpenAI Responses
// API (/v1/responses), OpenAI Chat Completions (/v1/chat/completions) and
// the Gemini API (/v1beta/models/M:generateContent, gemini.go), streaming
// (SSE) or not, on 127.0.0.1.
//
// A Script says what the "model" does step by step: call a tool by its
// canonical herdr-link name (resolved to the name, prefix or namespace the
// host uses in that request), searching for it where the host defers tools
// and falling back to the gateway's action form when it is not listed yet,
// and finish with text. Requests without tools (titles, summaries, token
// counting and other side requests hosts make) get a short text answer and
// are not script steps.
//
// Every request is logged (Requests, and as JSON lines to Options.Log):
// the tools it listed, the bytes of herdr-link's tool definitions, the
// tool results it carried back, the last user message, and what the fake
// answered. Tests assert on that log what the model saw.
//
// Each conversation (keyed by API and first user message) follows the
// script independently; a retried request gets the same answer again,
// because the step is derived from the number of tool results the request
// carries.
package fakemodel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options configure a fake.
type Options struct {
	Script Script
	// Log receives every Request as one JSON line (optional).
	Log io.Writer
	// Canonical lists the tool names the fake resolves (DefaultCanonical).
	Canonical []string
	// SearchTools are host tools that load deferred tools (DefaultSearchTools).
	SearchTools []string
	// KeepBodies keeps each request's raw body in Request.Body.
	KeepBodies bool
	// Addr to listen on (127.0.0.1:0).
	Addr string
}

// ToolDef is one tool a request listed.
type ToolDef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// Canonical is the herdr-link tool this is, or "".
	Canonical string `json:"canonical,omitempty"`
	// Bytes is the size of the tool's definition in compact JSON.
	Bytes int `json:"bytes"`
	// Deferred: listed but not loaded (the host's defer_loading).
	Deferred bool `json:"deferred,omitempty"`
	top      int  // index of the request's top-level tool entry holding it
}

// Result is one tool result a request carried back to the model.
type Result struct {
	CallID    string `json:"call_id"`
	Name      string `json:"name,omitempty"`
	Canonical string `json:"canonical,omitempty"`
	// Action is the herdr-link operation the call made: "activate",
	// "peers", "send" or "close" (a gateway call's action included).
	Action  string `json:"action,omitempty"`
	Text    string `json:"text"`
	Bytes   int    `json:"bytes"`
	IsError bool   `json:"is_error,omitempty"`
}

// Reply is what the fake answered.
type Reply struct {
	Kind      string          `json:"kind"` // "call", "text" or "error" (HTTP error)
	Tool      string          `json:"tool,omitempty"`
	Namespace string          `json:"namespace,omitempty"`
	Canonical string          `json:"canonical,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	// Via says how a call was made: "direct", "search" (loading a deferred
	// tool) or "gateway" (the action form, the tool not being listed).
	Via  string `json:"via,omitempty"`
	Text string `json:"text,omitempty"`
}

// Request is one logged request.
type Request struct {
	Seq    int       `json:"seq"`
	Time   time.Time `json:"time"`
	API    string    `json:"api"`
	Path   string    `json:"path"`
	Model  string    `json:"model,omitempty"`
	Stream bool      `json:"stream"`
	// Main is a script request; side requests (no tools) are answered
	// with short text.
	Main bool `json:"main"`
	// Conversation identifies the conversation (a hash of the first user message).
	Conversation string    `json:"conversation,omitempty"`
	Step         int       `json:"step"` // script step index of the reply; -1 for side requests
	Tools        []ToolDef `json:"tools,omitempty"`
	// LinkTools are the canonical herdr-link tools listed, loaded or not.
	LinkTools []string `json:"link_tools,omitempty"`
	// LinkDefBytes is the compact JSON size of the herdr-link tool
	// definitions in this request (a namespace entry counts whole).
	LinkDefBytes int      `json:"link_def_bytes"`
	Results      []Result `json:"results,omitempty"`
	LastUser     string   `json:"last_user,omitempty"`
	Reply        Reply    `json:"reply"`
	Body         []byte   `json:"-"`
}

// Server is a running fake.
type Server struct {
	// URL is the base URL, e.g. http://127.0.0.1:41234 (no trailing slash).
	URL string

	opts  Options
	ln    net.Listener
	hs    *http.Server
	mu    sync.Mutex
	seq   int
	reqs  []Request
	errs  []string
	convs map[string]*conversation
	calls map[string]callInfo
	ids   int
}

type callInfo struct{ name, canonical, action string }

type conversation struct {
	actions  []Reply
	steps    []int
	next     int
	searched map[string]bool
}

// Start starts a fake.
func Start(opts Options) (*Server, error) {
	if err := opts.Script.Validate(); err != nil {
		return nil, err
	}
	if opts.Canonical == nil {
		opts.Canonical = DefaultCanonical
	}
	if opts.SearchTools == nil {
		opts.SearchTools = DefaultSearchTools
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, ln: ln, URL: "http://" + ln.Addr().String(),
		convs: map[string]*conversation{}, calls: map[string]callInfo{}}
	s.hs = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.hs.Serve(ln)
	return s, nil
}

// New starts a fake for a test and closes it when the test ends.
func New(t testing.TB, script Script) *Server {
	t.Helper()
	s, err := Start(Options{Script: script})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Close stops the fake.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if s.hs.Shutdown(ctx) != nil {
		s.hs.Close()
	}
}

// Requests returns a copy of the log so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Main returns the script requests of the log.
func (s *Server) Main() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Main {
			out = append(out, r)
		}
	}
	return out
}

// Errors returns what went wrong in the script: tools that were not
// available, placeholders without an envelope, unparsable requests.
func (s *Server) Errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.errs)
}

func (s *Server) fail(format string, a ...any) {
	s.errs = append(s.errs, fmt.Sprintf(format, a...))
}

// maxBody bounds a request body.
const maxBody = 32 << 20

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "request body unreadable or too large", http.StatusRequestEntityTooLarge)
		return
	}
	path := r.URL.Path
	var api string
	var parse func([]byte, *parsed) error
	switch {
	case strings.HasSuffix(path, "/messages/count_tokens"):
		s.logSide("anthropic", path, body)
		writeJSON(w, map[string]any{"input_tokens": 1 + len(body)/4})
		return
	case strings.HasSuffix(path, "/messages"):
		api, parse = "anthropic", parseAnthropic
	case strings.HasSuffix(path, "/responses"):
		api, parse = "responses", parseResponses
	case strings.HasSuffix(path, "/chat/completions"):
		api, parse = "chat", parseChat
	case geminiMethod(path) == "countTokens":
		s.logSide("gemini", path, body)
		writeJSON(w, map[string]any{"totalTokens": 1 + len(body)/4})
		return
	case geminiMethod(path) == "generateContent" || geminiMethod(path) == "streamGenerateContent":
		api, parse = "gemini", parseGemini
	case strings.HasSuffix(path, "/models"):
		s.logSide("models", path, body)
		writeJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{"id": "fake-model", "object": "model", "owned_by": "fakemodel"}}, "models": []any{}})
		return
	default:
		s.logSide("unknown", path, body)
		http.NotFound(w, r)
		return
	}
	var p parsed
	err = parse(body, &p)
	if api == "gemini" {
		p.stream = geminiMethod(path) == "streamGenerateContent"
		if p.model == "" {
			p.model = geminiModel(path)
		}
	}
	if err != nil {
		s.mu.Lock()
		s.fail("%s %s: %v", api, path, err)
		s.mu.Unlock()
		http.Error(w, "fakemodel: "+err.Error(), http.StatusBadRequest)
		return
	}
	req := s.answer(api, path, body, &p)
	switch api {
	case "anthropic":
		writeAnthropic(w, &p, req.Reply)
	case "responses":
		writeResponses(w, &p, req.Reply)
	case "chat":
		writeChat(w, &p, req.Reply)
	case "gemini":
		writeGemini(w, &p, req.Reply)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) logSide(api, path string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.record(Request{API: api, Path: path, Step: -1, Reply: Reply{Kind: "side"}}, body)
}

func (s *Server) record(r Request, body []byte) Request {
	s.seq++
	r.Seq = s.seq
	r.Time = time.Now()
	if s.opts.KeepBodies {
		r.Body = body
	}
	s.reqs = append(s.reqs, r)
	if s.opts.Log != nil {
		if b, err := json.Marshal(r); err == nil {
			_, _ = s.opts.Log.Write(append(b, '\n'))
		}
	}
	return r
}
