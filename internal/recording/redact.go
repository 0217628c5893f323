package recording

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/herdr-link/herdr-link/internal/jsonshape"
)

// The schema table (schema_gen.go, written by ./gen: go generate
// ./internal/recording/...): one node per value position of Herdr's
// socket lines, as Herdr's API schema documents describe it.
type skind uint8

const (
	kAny    skind = iota // anything: all of it is data
	kString              // a string; with enum, one of those values
	kNumber
	kBool
	kNull
	kObject // props: the known keys, sorted; extra: a map's values (-1: none)
	kArray  // items: the elements
	kUnion  // alts: one of these
)

type snode struct {
	k     skind
	enum  []string
	props []sprop
	extra int32
	items int32
	alts  []int32
}

type sprop struct {
	key  string
	node int32
}

// noNode is a position the schema does not describe: all of it is data.
const noNode int32 = -1

func lookup(props []sprop, key string) int32 {
	i := sort.Search(len(props), func(i int) bool { return props[i].key >= key })
	if i < len(props) && props[i].key == key {
		return props[i].node
	}
	return noNode
}

// Redact returns exchanges with everything that is not Herdr's own
// vocabulary replaced, by schema: a string is kept only where Herdr's
// schema lists the values it takes (enums and tags) and it is one of them,
// or where it is a built-in agent kind, an error code Herdr is known to
// send, a version number or one of herdr-link's own request ids. Every
// other string (ids, names, labels, paths, titles, cwds, sessions,
// messages, anything unknown) gets a stand-in, the same one for the same
// value everywhere; ids keep their form, so the simulator parses a
// stand-in as Herdr would have parsed the original. Object keys the schema
// does not name (the keys of maps, unknown fields) get stand-ins too, and
// so do numbers outside the schema's counters and sizes (process ids,
// times, numbers in unknown places: 0). Keys the schema names, key order,
// types, null and booleans are untouched.
func Redact(exchanges []Exchange) ([]Exchange, error) {
	r := &redactor{m: map[string]string{}, tabs: map[string]int{}, pans: map[string]int{}, counts: map[string]int{}}
	out := make([]Exchange, len(exchanges))
	for i, e := range exchanges {
		req, err := jsonshape.Parse(e.Request)
		if err != nil {
			return nil, fmt.Errorf("recording: exchange %d request: %w", i+1, err)
		}
		r.top(req, "request")
		out[i].Request = req.Marshal()
		for j, l := range e.Responses {
			n, err := jsonshape.Parse(l)
			if err != nil {
				return nil, fmt.Errorf("recording: exchange %d line %d: %w", i+1, j+1, err)
			}
			switch {
			case n.Get("result") != nil:
				r.top(n, "success_response")
			case n.Get("error") != nil:
				r.top(n, "error_response")
			default:
				r.top(n, "event", "subscription_event")
			}
			out[i].Responses = append(out[i].Responses, n.Marshal())
		}
	}
	return out, nil
}

// requestID is the form of herdr-link's own request ids, kept.
var requestID = regexp.MustCompile(`^probe:[a-z0-9._:-]{1,64}$`)

// top redacts one line against the best fitting of the named roots. Its
// "id" is the request id (a key requests have beside the schema's
// method and params): herdr-link's own ids are kept, others replaced.
func (r *redactor) top(n *jsonshape.Node, roots ...string) {
	alts := make([]int32, 0, len(roots))
	for _, name := range roots {
		alts = append(alts, lookup(schemaRoots, name))
	}
	s := r.best(n, alts)
	if n.Kind != jsonshape.Object {
		r.walk(n, s, "")
		return
	}
	at := -1
	for i, k := range n.Keys {
		if k == "id" {
			at = i
		}
	}
	if at < 0 {
		r.walk(n, s, "")
		return
	}
	id := n.Vals[at]
	n.Keys = append(n.Keys[:at:at], n.Keys[at+1:]...)
	n.Vals = append(n.Vals[:at:at], n.Vals[at+1:]...)
	r.walk(n, s, "")
	n.Keys = append(n.Keys[:at:at], append([]string{"id"}, n.Keys[at:]...)...)
	n.Vals = append(n.Vals[:at:at], append([]*jsonshape.Node{id}, n.Vals[at:]...)...)
	if id.Kind != jsonshape.String || id.Text != "" && !requestID.MatchString(id.Text) {
		r.walk(id, noNode, "id")
	}
}

// best is the alternative that fits n best, or noNode.
func (r *redactor) best(n *jsonshape.Node, alts []int32) int32 {
	best, score := noNode, 0
	for _, a := range alts {
		leaf, sc := fit(n, a)
		if sc > score {
			best, score = leaf, sc
		}
	}
	return best
}

// fit resolves s for n (through unions) and scores how well it fits:
// 0 not at all, more for a matching kind, known keys and matching tags.
func fit(n *jsonshape.Node, s int32) (int32, int) {
	if s == noNode {
		return noNode, 0
	}
	sn := &schemaNodes[s]
	if sn.k == kUnion {
		best, score := noNode, 0
		for _, a := range sn.alts {
			if leaf, sc := fit(n, a); sc > score {
				best, score = leaf, sc
			}
		}
		return best, score
	}
	switch {
	case sn.k == kAny:
		return s, 1
	case n.Kind == jsonshape.String && sn.k == kString:
		if sn.enum == nil || member(sn.enum, n.Text) {
			return s, 3
		}
		return s, 2
	case n.Kind == jsonshape.Number && sn.k == kNumber, n.Kind == jsonshape.Bool && sn.k == kBool,
		n.Kind == jsonshape.Null, n.Kind == jsonshape.Array && sn.k == kArray:
		return s, 3
	case n.Kind == jsonshape.Object && sn.k == kObject:
		score := 2
		for i, k := range n.Keys {
			p := lookup(sn.props, k)
			if p == noNode {
				continue
			}
			score += 2
			pn := &schemaNodes[p]
			if pn.k != kString || pn.enum == nil || n.Vals[i].Kind != jsonshape.String {
				continue
			}
			switch in := member(pn.enum, n.Vals[i].Text); {
			case len(pn.enum) == 1 && in:
				score += 1000 // its tag
			case len(pn.enum) == 1:
				score -= 1000 // another variant's tag
			case in:
				score += 10 // one of its kinds
			}
		}
		return s, max(score, 1)
	}
	return noNode, 0
}

func member(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// walk redacts n in place as schema node s (of key) says.
func (r *redactor) walk(n *jsonshape.Node, s int32, key string) {
	if s != noNode && schemaNodes[s].k == kUnion {
		s, _ = fit(n, s)
	}
	var sn *snode
	if s != noNode {
		sn = &schemaNodes[s]
	}
	switch n.Kind {
	case jsonshape.Object:
		for i, k := range n.Keys {
			child := noNode
			if sn != nil && sn.k == kObject {
				if child = lookup(sn.props, k); child == noNode {
					child = sn.extra
					n.Keys[i] = r.stand("key", k) // a map's key, or a key Herdr's schema lacks
				}
			} else {
				n.Keys[i] = r.stand("key", k)
			}
			r.walk(n.Vals[i], child, k)
		}
	case jsonshape.Array:
		items := noNode
		if sn != nil && sn.k == kArray {
			items = sn.items
		}
		for _, v := range n.Items {
			r.walk(v, items, key)
		}
	case jsonshape.String:
		if sn != nil && sn.k == kString && sn.enum != nil && member(sn.enum, n.Text) {
			return // Herdr's vocabulary
		}
		if sn == nil || sn.k != kString || sn.enum != nil {
			n.Text = r.stand("value", n.Text) // not a string Herdr's schema has here
			return
		}
		n.Text = r.value(key, n.Text)
	case jsonshape.Number:
		if sn == nil || sn.k != kNumber || personal(key) {
			n.Text = "0"
		}
	}
}

// personal reports whether a numeric field of Herdr's schema identifies a
// process or a moment rather than counting or measuring.
func personal(key string) bool {
	return key == "pid" || strings.HasSuffix(key, "_pid") || strings.HasSuffix(key, "_unix") || strings.HasSuffix(key, "_unix_ms") ||
		strings.HasSuffix(key, "process_group_id")
}

// Stand-in classes of free strings, by the field that holds them (for a
// readable recording; every one of them is replaced).
var (
	idKeys    = regexp.MustCompile(`(^|_)id$`)
	pathKeys  = map[string]bool{"cwd": true, "foreground_cwd": true, "path": true, "worktree_path": true, "repo_root": true}
	titleKeys = map[string]bool{"title": true, "terminal_title": true, "terminal_title_stripped": true}
	nameKeys  = map[string]bool{"name": true, "target": true, "to": true}
	labelKeys = map[string]bool{"label": true, "tab_label": true}
	version   = regexp.MustCompile(`^[0-9]{1,4}(\.[0-9]{1,6}){1,3}$`)
)

// value is the stand-in of a free string v of field key, or v itself for
// the few vocabularies Herdr's schema does not enumerate.
func (r *redactor) value(key, v string) string {
	switch {
	case v == "":
		return v
	case (key == "agent" || key == "display_agent") && agentKinds[v]:
		return v
	case key == "source" && strings.HasPrefix(v, "herdr:") && agentKinds[v[len("herdr:"):]]:
		return v
	case key == "code" && errorCodes[v]:
		return v
	case key == "version" && version.MatchString(v):
		return v
	case key == "agent" || key == "display_agent":
		return r.stand("agent", v)
	case idKeys.MatchString(key):
		return r.stand("id", v)
	case pathKeys[key]:
		return r.stand("path", v)
	case titleKeys[key]:
		return r.stand("title", v)
	case nameKeys[key]:
		// A target is a pane id or a name.
		if wsForm.MatchString(v) || tabForm.MatchString(v) || paneForm.MatchString(v) || strings.HasPrefix(v, "term_") {
			return r.stand("id", v)
		}
		return r.stand("name", v)
	case labelKeys[key]:
		if _, err := strconv.Atoi(v); err == nil && len(v) <= 4 {
			return v // Herdr's default tab label, a position
		}
		return r.stand("label", v)
	case key == "value":
		return r.stand("session", v)
	case key == "message":
		return r.stand("message", v)
	case key == "code":
		return r.stand("code", v)
	}
	return r.stand("value", v)
}

// agentKinds are the agent kinds Herdr 0.8 and 0.9 detect on their own
// (and their aliases): a fixed vocabulary, kept.
var agentKinds = setOf("pi", "claude", "claude-code", "codex", "gemini", "cursor", "cursor-agent", "devin", "devin-cli",
	"agy", "antigravity", "antigravity-cli", "cline", "omp", "mastracode", "mastra-code", "opencode", "opencode2", "open-code",
	"copilot", "github-copilot", "ghcs", "kimi", "kimi-code", "kiro", "kiro-cli", "droid", "amp", "amp-local", "grok",
	"grok-build", "hermes", "hermes-agent", "kilo", "kilo-code", "qodercli", "qoderclicn", "qoder", "qodercn", "qwen",
	"qwen-code", "maki")

// errorCodes are the error codes Herdr is known to answer with, kept.
var errorCodes = setOf("invalid_request", "not_implemented", "internal_error", "server_unavailable", "timeout",
	"connection_local_only", "incompatible_protocol", "confirmation_required", "unsupported_event_wait_match",
	"agent_not_found", "agent_target_ambiguous", "agent_blocked", "agent_not_ready", "agent_not_running",
	"empty_agent_prompt", "agent_prompt_failed", "agent_prompt_stalled", "agent_name_taken", "invalid_agent_name",
	"agent_launch_pending", "agent_pane_busy", "agent_pane_not_found", "agent_kind_mismatch", "agent_start_failed",
	"pane_not_found", "target_pane_not_found", "pane_layout_unavailable", "pane_move_failed", "tab_not_found",
	"workspace_not_found")

func setOf(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}
