package fakemodel

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// fuzzRequest parses a body with one API's parser and, when it parses,
// answers it the way the server does; nothing may panic, and the parsed
// form must be consistent.
func fuzzRequest(f *testing.F, api string, parse func([]byte, *parsed) error, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":null}],"input":null,"tools":[]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var p parsed
		if err := parse(body, &p); err != nil {
			return
		}
		if len(p.newResults) > p.resultCount {
			t.Fatalf("%d new results but %d in all", len(p.newResults), p.resultCount)
		}
		for _, td := range p.tools {
			if td.top < 0 || td.top >= len(p.topBytes) {
				t.Fatalf("tool %q points at entry %d of %d", td.Name, td.top, len(p.topBytes))
			}
		}
		s := &Server{opts: Options{Script: Script{Steps: []Step{{Call: Gateway}, {Call: Send, Args: map[string]any{"to": "${envelope.from}"}}, {Text: "t"}}},
			Canonical: DefaultCanonical, SearchTools: DefaultSearchTools}, convs: map[string]*conversation{}, calls: map[string]callInfo{}}
		req := s.answer(api, "/v1/x", body, &p)
		w := httptest.NewRecorder()
		switch api {
		case "anthropic":
			writeAnthropic(w, &p, req.Reply)
		case "responses":
			writeResponses(w, &p, req.Reply)
		case "gemini":
			writeGemini(w, &p, req.Reply)
		default:
			writeChat(w, &p, req.Reply)
		}
		if w.Body.Len() == 0 {
			t.Fatal("empty answer")
		}
	})
}

func FuzzParseAnthropic(f *testing.F) {
	fuzzRequest(f, "anthropic", parseAnthropic, claudeToolSearch)
}

func FuzzParseResponses(f *testing.F) {
	fuzzRequest(f, "responses", parseResponses, codexActive, `{"input":"hello","tools":[{"type":"namespace","name":"n","tools":[{"name":"herdr_link"}]}]}`)
}

func FuzzParseChat(f *testing.F) {
	fuzzRequest(f, "chat", parseChat, opencodeActive, opencodeTitle)
}

func FuzzEnvelopes(f *testing.F) {
	f.Add(`x{"protocol":"herdr-link/1","id":"hl_1","from":"a","to":"b","message":"m"}y`)
	f.Add(`{"protocol" : "herdr-link/1", "id": 3}`)
	f.Fuzz(func(t *testing.T, text string) {
		for _, e := range Envelopes(text) {
			if e.Protocol != "herdr-link/1" || e.ID == "" {
				t.Fatalf("Envelopes(%q) took protocol %q, id %q; want herdr-link/1 and an id", text, e.Protocol, e.ID)
			}
		}
		if !strings.Contains(text, "herdr-link/1") && len(Envelopes(text)) != 0 {
			t.Fatal("envelope without the protocol string")
		}
	})
}

func FuzzParseScript(f *testing.F) {
	f.Add(`{"steps":[{"call":"herdr_link","args":{"a":["${envelope.id}"]}},{"text":"${envelope.message}"}],"final_text":"x"}`)
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseScript([]byte(in))
		if err != nil {
			return
		}
		if s.Validate() != nil {
			t.Fatal("parsed script does not validate")
		}
		env := &Envelope{ID: "hl_1", From: "a", To: "b", Message: "m"}
		for _, st := range s.Steps {
			if st.Args != nil {
				if _, err := fillArgs(map[string]any(st.Args), env); err != nil {
					t.Fatalf("fill with an envelope: %v", err)
				}
			}
		}
	})
}
