package fakemodel

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// parsed is a request in API-neutral form.
type parsed struct {
	model       string
	stream      bool
	tools       []ToolDef
	topBytes    []int    // compact size of each top-level tool entry
	userTexts   []string // user-authored text, in order
	firstUser   string
	resultCount int // tool results in the whole history
	newResults  []Result
	raw         []byte
}

func (s *Server) resolve(p *parsed) (link []string, linkBytes int) {
	counted := map[int]bool{}
	for i := range p.tools {
		t := &p.tools[i]
		t.Canonical = canonicalName(t.Name, t.Namespace, s.opts.Canonical)
		if t.Canonical == "" {
			continue
		}
		if !slices.Contains(link, t.Canonical) {
			link = append(link, t.Canonical)
		}
		if !counted[t.top] && t.top < len(p.topBytes) {
			counted[t.top] = true
			linkBytes += p.topBytes[t.top]
		}
	}
	return link, linkBytes
}

// canonicalName maps a host's tool name to a canonical one: the name
// itself, or one ending in "_"+canonical (mcp__server__tool,
// server_tool) or "-"+canonical (Copilot CLI's server-tool). The longest
// canonical match wins.
func canonicalName(name, namespace string, canon []string) string {
	best := ""
	for _, c := range canon {
		if (name == c || strings.HasSuffix(name, "_"+c) || strings.HasSuffix(name, "-"+c)) && len(c) > len(best) {
			best = c
		}
	}
	return best
}

func (s *Server) answer(api, path string, body []byte, p *parsed) Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	link, linkBytes := s.resolve(p)
	req := Request{API: api, Path: path, Model: p.model, Stream: p.stream, Tools: p.tools,
		LinkTools: link, LinkDefBytes: linkBytes, Step: -1}
	if n := len(p.userTexts); n > 0 {
		req.LastUser = p.userTexts[n-1]
	}
	for _, r := range p.newResults {
		if ci, ok := s.calls[r.CallID]; ok {
			r.Name, r.Canonical, r.Action = ci.name, ci.canonical, ci.action
		}
		req.Results = append(req.Results, r)
	}
	req.Main = len(p.tools) > 0
	if !req.Main {
		req.Reply = Reply{Kind: "text", Text: "OK"}
		return s.record(req, body)
	}
	sum := sha256.Sum256([]byte(api + "\x00" + p.firstUser))
	key := hex.EncodeToString(sum[:6])
	req.Conversation = key
	c := s.convs[key]
	if c == nil {
		c = &conversation{searched: map[string]bool{}}
		s.convs[key] = c
	}
	n := p.resultCount
	switch {
	case n < len(c.actions):
		req.Reply, req.Step = c.actions[n], c.steps[n]
	case n == len(c.actions):
		req.Reply, req.Step = s.decide(c, p)
		c.actions = append(c.actions, req.Reply)
		c.steps = append(c.steps, req.Step)
	default:
		s.fail("request %d carries %d tool results but the fake made only %d calls", s.seq+1, n, len(c.actions))
		req.Reply = Reply{Kind: "text", Text: "fakemodel: lost track of this conversation"}
	}
	return s.record(req, body)
}

func (s *Server) newID(prefix string) string {
	s.ids++
	return fmt.Sprintf("%s%04d", prefix, s.ids)
}

func (s *Server) lastEnvelope(p *parsed) *Envelope {
	for i := len(p.userTexts) - 1; i >= 0; i-- {
		if e := Envelopes(p.userTexts[i]); len(e) > 0 {
			return &e[len(e)-1]
		}
	}
	return nil
}

// decide picks the answer to a new script request.
func (s *Server) decide(c *conversation, p *parsed) (Reply, int) {
	steps := s.opts.Script.Steps
	if c.next >= len(steps) {
		t := s.opts.Script.FinalText
		if t == "" {
			t = "done"
		}
		return Reply{Kind: "text", Text: t}, len(steps)
	}
	idx := c.next
	st := steps[idx]
	env := s.lastEnvelope(p)
	if st.Text != "" {
		c.next++
		t, err := fill(st.Text, env)
		if err != nil {
			s.fail("step %d: %v", idx+1, err)
		}
		return Reply{Kind: "text", Text: t}, idx
	}
	var args any = map[string]any{}
	if st.Args != nil {
		a, err := fillArgs(map[string]any(st.Args), env)
		if err != nil {
			s.fail("step %d: %v", idx+1, err)
		}
		if a, err = fillResultID(a, lastResultID(p.newResults)); err != nil {
			s.fail("step %d: %v", idx+1, err)
		}
		args = a
	}
	if t := find(p.tools, st.Call, false); t != nil {
		c.next++
		return s.call(t, st.Call, args, "direct"), idx
	}
	if search := s.searchTool(p); search != nil && !c.searched[st.Call] {
		c.searched[st.Call] = true
		q := strings.ReplaceAll(st.Call, "_", " ")
		if name := deferredName(p.raw, st.Call); name != "" {
			q = "select:" + name
		}
		return s.call(search, "", map[string]any{"query": q, "max_results": 5}, "search"), idx
	}
	if gw := find(p.tools, Gateway, false); gw != nil && st.Call != Gateway && !st.NoFallback {
		c.next++
		action := strings.TrimPrefix(st.Call, Gateway+"_")
		return s.call(gw, Gateway, map[string]any{"action": action, "arguments": args}, "gateway"), idx
	}
	c.next = len(steps)
	s.fail("step %d: %s is not available to the model (listed: %s)", idx+1, st.Call, toolNames(p.tools))
	return Reply{Kind: "text", Text: "fakemodel: " + st.Call + " is not available"}, idx
}

func toolNames(ts []ToolDef) string {
	var n []string
	for _, t := range ts {
		if t.Namespace != "" {
			n = append(n, t.Namespace+"/"+t.Name)
		} else {
			n = append(n, t.Name)
		}
	}
	return strings.Join(n, ", ")
}

func find(ts []ToolDef, canonical string, deferredOK bool) *ToolDef {
	for i := range ts {
		if ts[i].Canonical == canonical && (deferredOK || !ts[i].Deferred) {
			return &ts[i]
		}
	}
	return nil
}

func (s *Server) searchTool(p *parsed) *ToolDef {
	for i := range p.tools {
		if slices.Contains(s.opts.SearchTools, p.tools[i].Name) {
			return &p.tools[i]
		}
	}
	return nil
}

// deferredName finds the host's full name of a deferred tool where the
// host lists them (e.g. mcp__herdr_link__herdr_link_send in a reminder).
func deferredName(raw []byte, canonical string) string {
	re, err := regexp.Compile(`\b[A-Za-z0-9_-]*_` + regexp.QuoteMeta(canonical) + `\b`)
	if err != nil {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	found := ""
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if found == "" {
				found = re.FindString(x)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return found
}

func (s *Server) call(t *ToolDef, canonical string, args any, via string) Reply {
	b, err := json.Marshal(args)
	if err != nil {
		b = []byte("{}")
	}
	id := s.newID("call_fm")
	s.calls[id] = callInfo{name: t.Name, canonical: canonical, action: actionOf(canonical, args)}
	return Reply{Kind: "call", Tool: t.Name, Namespace: t.Namespace, Canonical: canonical, Args: b, CallID: id, Via: via}
}

// compactLen is the size of a JSON value in compact form.
func compactLen(raw []byte) int {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return len(raw)
	}
	return b.Len()
}

// actionOf names the herdr-link operation of a call.
func actionOf(canonical string, args any) string {
	switch canonical {
	case "":
		return ""
	case Gateway:
		if m, ok := args.(map[string]any); ok {
			if a, ok := m["action"].(string); ok && a != "" {
				return a
			}
		}
		return "activate"
	}
	return strings.TrimPrefix(canonical, Gateway+"_")
}
