package fakemodel

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/herdr-link/herdr-link/internal/limited"
)

// Step is one thing the scripted model does. Exactly one of Call and Text
// is set.
//
// Call names a tool by its canonical (herdr-link) name, e.g.
// "herdr_link_peers"; the fake resolves it to whatever name, prefix or
// namespace the host uses in the request at hand. When the tool is not
// listed directly, the fake first searches for it where the host defers
// tools (a search tool such as Claude Code's ToolSearch), then falls back
// to the gateway's action form ({"action":"peers","arguments":{…}}).
//
// Args and Text may hold placeholders filled from the last herdr-link/1
// envelope in the conversation's user messages: ${envelope.id},
// ${envelope.from}, ${envelope.to}, ${envelope.message}; and
// ${result.id}, the "hl_…" id of the last herdr-link result the request
// carries back (a send's), e.g. for herdr_link_wait.
type Step struct {
	Call string         `json:"call,omitempty"`
	Args map[string]any `json:"args,omitempty"`
	Text string         `json:"text,omitempty"`
	// NoFallback makes a Call fail instead of using the gateway's action
	// form when the tool is not listed.
	NoFallback bool `json:"no_fallback,omitempty"`
}

// Script is what the model does, step by step, in every conversation the
// fake serves. After the last step it finishes with FinalText.
type Script struct {
	Steps []Step `json:"steps"`
	// FinalText ends a conversation whose steps are used up ("done" when empty).
	FinalText string `json:"final_text,omitempty"`
}

// Canonical tool names of herdr-link.
const (
	Gateway   = "herdr_link"
	Peers     = "herdr_link_peers"
	Send      = "herdr_link_send"
	Close     = "herdr_link_close"
	StartTool = "herdr_link_start"
	Wait      = "herdr_link_wait"
)

// DefaultCanonical lists the herdr-link tools the fake recognises.
var DefaultCanonical = []string{Gateway, Peers, Send, Close, StartTool, Wait}

// DefaultSearchTools are the host tools that load deferred tools.
var DefaultSearchTools = []string{"ToolSearch"}

// Validate reports a malformed script.
func (s Script) Validate() error {
	for i, st := range s.Steps {
		switch {
		case st.Call == "" && st.Text == "":
			return fmt.Errorf("step %d: needs call or text", i+1)
		case st.Call != "" && st.Text != "":
			return fmt.Errorf("step %d: has both call and text", i+1)
		case st.Text != "" && st.Args != nil:
			return fmt.Errorf("step %d: a text step takes no args", i+1)
		}
	}
	return nil
}

// ParseScript reads a script from JSON and validates it.
func ParseScript(data []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("script: %w", err)
	}
	if dec.More() {
		return Script{}, fmt.Errorf("script: trailing data after the JSON object")
	}
	if err := s.Validate(); err != nil {
		return Script{}, fmt.Errorf("script: %w", err)
	}
	return s, nil
}

// LoadScript reads a script file.
func LoadScript(path string) (Script, error) {
	b, err := limited.ReadFile(path, 16<<20)
	if err != nil {
		return Script{}, err
	}
	return ParseScript(b)
}

// Envelope is the part of a herdr-link/1 envelope placeholders use.
type Envelope struct {
	Protocol string `json:"protocol"`
	ID       string `json:"id"`
	From     string `json:"from"`
	To       string `json:"to"`
	ReplyTo  string `json:"reply_to,omitempty"`
	Message  string `json:"message"`
}

var envelopeStart = regexp.MustCompile(`\{\s*"protocol"\s*:\s*"herdr-link/1"`)

// Envelopes returns every herdr-link/1 envelope found anywhere in text, in
// order (glued to other text or not).
func Envelopes(text string) []Envelope {
	var out []Envelope
	for _, loc := range envelopeStart.FindAllStringIndex(text, -1) {
		dec := json.NewDecoder(strings.NewReader(text[loc[0]:]))
		var e Envelope
		if dec.Decode(&e) == nil && e.Protocol == "herdr-link/1" && e.ID != "" {
			out = append(out, e)
		}
	}
	return out
}

var placeholder = regexp.MustCompile(`\$\{envelope\.(id|from|to|message|reply_to)\}`)

func fill(s string, env *Envelope) (string, error) {
	var missing error
	out := placeholder.ReplaceAllStringFunc(s, func(m string) string {
		if env == nil {
			missing = fmt.Errorf("%s: no herdr-link/1 envelope in the conversation", m)
			return m
		}
		switch placeholder.FindStringSubmatch(m)[1] {
		case "id":
			return env.ID
		case "from":
			return env.From
		case "to":
			return env.To
		case "reply_to":
			return env.ReplyTo
		default:
			return env.Message
		}
	})
	return out, missing
}

var resultID = regexp.MustCompile(`"id"\s*:\s*"(hl_[A-Za-z0-9_-]+)"`)

// lastResultID is the "hl_…" id in the last of results that has one.
func lastResultID(results []Result) string {
	for i := len(results) - 1; i >= 0; i-- {
		if m := resultID.FindStringSubmatch(results[i].Text); m != nil {
			return m[1]
		}
	}
	return ""
}

const resultIDPlaceholder = "${result.id}"

// fillResultID fills ${result.id} in the strings of v with id.
func fillResultID(v any, id string) (any, error) {
	return mapStrings(v, func(x string) (string, error) {
		if !strings.Contains(x, resultIDPlaceholder) {
			return x, nil
		}
		if id == "" {
			return x, fmt.Errorf("%s: no herdr-link result with an id in the request", resultIDPlaceholder)
		}
		return strings.ReplaceAll(x, resultIDPlaceholder, id), nil
	})
}

func fillArgs(v any, env *Envelope) (any, error) {
	return mapStrings(v, func(x string) (string, error) { return fill(x, env) })
}

// mapStrings returns v with every string in it (in maps and slices, at
// any depth) replaced by f's answer.
func mapStrings(v any, f func(string) (string, error)) (any, error) {
	switch x := v.(type) {
	case string:
		return f(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			g, err := mapStrings(e, f)
			if err != nil {
				return nil, err
			}
			out[k] = g
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			g, err := mapStrings(e, f)
			if err != nil {
				return nil, err
			}
			out[i] = g
		}
		return out, nil
	}
	return v, nil
}
