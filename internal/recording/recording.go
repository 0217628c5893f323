// Package recording reads, writes and scrubs recordings of Herdr socket
// exchanges: the lines `herdr-link probe --record` exchanged with a live
// Herdr, which `herdr-sim verify` replays against the simulator.
//
// The format is text, one line per socket line: "> " and the request a
// connection sent, then "< " and each line Herdr answered on it; lines
// starting with "#" are comments. A recording is meant to be attached to
// bug reports, so [Redact] replaces every id, name, label, path, title and
// cwd with a stand-in, the same stand-in for the same value everywhere.
package recording

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/herdr-link/herdr-link/internal/jsonshape"
	"github.com/herdr-link/herdr-link/internal/ndjson"
)

// Header is the first line of a recording.
const Header = "# herdr-link recording 1"

// MaxTotal bounds a whole recording.
const MaxTotal = 256 << 20

// MaxLine bounds one recorded line (Herdr's answers can be large).
const MaxLine = 64 << 20

var maxTotal = MaxTotal

// Exchange is one connection: the request line and the lines Herdr wrote.
type Exchange struct {
	Request   []byte
	Responses [][]byte
}

// Method is the request's method, or "".
func (e Exchange) Method() string {
	n, err := jsonshape.Parse(e.Request)
	if err != nil {
		return ""
	}
	return n.Str("method")
}

// Write writes exchanges in the recording format, with comment lines
// (each written with a leading "# ").
func Write(w io.Writer, comments []string, exchanges []Exchange) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, Header)
	for _, c := range comments {
		for _, l := range strings.Split(c, "\n") {
			fmt.Fprintln(bw, "# "+l)
		}
	}
	for _, e := range exchanges {
		if err := oneLine(e.Request); err != nil {
			return err
		}
		fmt.Fprintf(bw, "> %s\n", e.Request)
		for _, r := range e.Responses {
			if err := oneLine(r); err != nil {
				return err
			}
			fmt.Fprintf(bw, "< %s\n", r)
		}
	}
	return bw.Flush()
}

func oneLine(b []byte) error {
	if bytes.ContainsAny(b, "\r\n") {
		return errors.New("recording: a line holds a line break")
	}
	return nil
}

// Parse reads a recording. Every line is bounded before it is buffered:
// the first (the header) by the header's length, the others by MaxLine,
// and the whole recording by MaxTotal; input past a bound is an error, not
// read further.
func Parse(r io.Reader) ([]Exchange, error) {
	rd := ndjson.NewReaderSize(r, len(Header)+1, 64<<10) // a "\r" may end it
	var out []Exchange
	total := 0
	for n := 1; ; n++ {
		line, err := rd.ReadLine()
		switch {
		case errors.Is(err, ndjson.ErrLineTooLong) && n == 1:
			return nil, fmt.Errorf("recording: line 1 is not %q (not a herdr-link recording?)", Header)
		case errors.Is(err, ndjson.ErrLineTooLong):
			return nil, fmt.Errorf("recording: line %d is longer than %d bytes", n, MaxLine)
		case errors.Is(err, io.EOF):
			return out, nil
		case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
			return nil, err
		}
		if total += len(line) + 1; total > maxTotal {
			return nil, fmt.Errorf("recording: larger than %d bytes", maxTotal)
		}
		rd.SetMax(MaxLine)
		if perr := parseLine(&out, n, bytes.TrimRight(line, "\r")); perr != nil {
			return nil, perr
		}
		if err != nil { // the last line had no newline
			return out, nil
		}
	}
}

// parseLine adds line n of a recording to out.
func parseLine(out *[]Exchange, n int, line []byte) error {
	switch {
	case n == 1 && string(line) != Header:
		return fmt.Errorf("recording: line 1 is %q, want %q (not a herdr-link recording?)", truncate(line), Header)
	case len(line) == 0 || line[0] == '#':
	case bytes.HasPrefix(line, []byte("> ")):
		*out = append(*out, Exchange{Request: append([]byte(nil), line[2:]...)})
	case bytes.HasPrefix(line, []byte("< ")):
		if len(*out) == 0 {
			return fmt.Errorf("recording: line %d: a response before any request", n)
		}
		last := &(*out)[len(*out)-1]
		last.Responses = append(last.Responses, append([]byte(nil), line[2:]...))
	default:
		return fmt.Errorf("recording: line %d starts with %q, want \"> \", \"< \" or \"#\"", n, truncate(line))
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// Redaction classes: which stand-in a key's string value gets.
var (
	idKeys    = regexp.MustCompile(`(^|_)id$`)
	pathKeys  = map[string]bool{"cwd": true, "foreground_cwd": true, "path": true, "worktree_path": true, "repo_root": true}
	titleKeys = map[string]bool{"title": true, "terminal_title": true, "terminal_title_stripped": true}
	nameKeys  = map[string]bool{"name": true, "target": true, "to": true}
	labelKeys = map[string]bool{"label": true, "tab_label": true}
	// Keys whose values are Herdr's own vocabulary (kinds, tags, codes,
	// statuses, versions), kept as recorded.
	keepKeys = map[string]bool{"type": true, "event": true, "code": true, "method": true, "agent": true, "agent_status": true,
		"version": true, "source": true, "kind": true, "direction": true, "format": true, "reason": true, "status": true,
		"final_status": true, "display_agent": true, "split": true, "until": true}
)

var (
	wsForm   = regexp.MustCompile(`^w[0-9A-Z]{1,12}$`)
	tabForm  = regexp.MustCompile(`^(w[0-9A-Z]{1,12}):t([0-9A-Z]{1,12})$`)
	paneForm = regexp.MustCompile(`^(w[0-9A-Z]{1,12}):p([0-9A-Z]{1,12})$`)
)

// alphabet is Herdr's id digit set (bijective base 32).
const alphabet = "123456789ABCDEFGHJKMNPQRSTVWXYZ0"

func encode(n int) string {
	var b []byte
	for n > 0 {
		n--
		b = append([]byte{alphabet[n%32]}, b...)
		n /= 32
	}
	return string(b)
}

// redactor assigns stand-ins on first sight.
type redactor struct {
	m          map[string]string
	ws         int
	tabs, pans map[string]int // per stand-in workspace
	counts     map[string]int // per class
}

func (r *redactor) stand(class, v string) string {
	if s, ok := r.m[v]; ok {
		return s
	}
	var s string
	switch class {
	case "id":
		s = r.id(v)
	default:
		r.counts[class]++
		n := strconv.Itoa(r.counts[class])
		switch class {
		case "path":
			s = "/redacted/dir-" + n
		case "title":
			s = "title " + n
		case "name":
			s = "agent-" + n
		case "label":
			s = "label-" + n
		default:
			s = class + "-" + n
		}
	}
	r.m[v] = s
	return s
}

// id keeps an id's form, so the simulator parses the stand-in as Herdr
// would have parsed the original.
func (r *redactor) id(v string) string {
	switch {
	case wsForm.MatchString(v):
		r.ws++
		return "w" + encode(r.ws)
	case tabForm.MatchString(v):
		ws := r.stand("id", tabForm.FindStringSubmatch(v)[1])
		r.tabs[ws]++
		return ws + ":t" + encode(r.tabs[ws])
	case paneForm.MatchString(v):
		ws := r.stand("id", paneForm.FindStringSubmatch(v)[1])
		r.pans[ws]++
		return ws + ":p" + encode(r.pans[ws])
	case strings.HasPrefix(v, "term_"):
		r.counts["term"]++
		return fmt.Sprintf("term_%015x", r.counts["term"])
	case v == "":
		return ""
	}
	r.counts["id"]++
	return "id-" + strconv.Itoa(r.counts["id"])
}

// Redact returns exchanges with every id, name, label, path, title, cwd,
// session reference and free-form value replaced consistently, and the
// same replacements applied inside error messages. Request ids are kept;
// keys, key order, types, tags and error codes are untouched.
func Redact(exchanges []Exchange) ([]Exchange, error) {
	r := &redactor{m: map[string]string{}, tabs: map[string]int{}, pans: map[string]int{}, counts: map[string]int{}}
	type parsed struct{ req, resp []*jsonshape.Node }
	all := make([]parsed, len(exchanges))
	var messages []*jsonshape.Node
	for i, e := range exchanges {
		req, err := jsonshape.Parse(e.Request)
		if err != nil {
			return nil, fmt.Errorf("recording: exchange %d request: %w", i+1, err)
		}
		r.walk(req, "", true, &messages)
		all[i].req = append(all[i].req, req)
		for j, l := range e.Responses {
			n, err := jsonshape.Parse(l)
			if err != nil {
				return nil, fmt.Errorf("recording: exchange %d line %d: %w", i+1, j+1, err)
			}
			r.walk(n, "", true, &messages)
			all[i].resp = append(all[i].resp, n)
		}
	}
	// Messages last, when every value has its stand-in: longest first, so
	// "w1:p10" is not rewritten as "w1:p1" + "0".
	olds := make([]string, 0, len(r.m))
	for o := range r.m {
		if len(o) >= 2 {
			olds = append(olds, o)
		}
	}
	sort.Slice(olds, func(i, j int) bool {
		return len(olds[i]) > len(olds[j]) || (len(olds[i]) == len(olds[j]) && olds[i] < olds[j])
	})
	pairs := make([]string, 0, 2*len(olds))
	for _, o := range olds {
		pairs = append(pairs, o, r.m[o])
	}
	rep := strings.NewReplacer(pairs...)
	for _, m := range messages {
		m.Text = rep.Replace(m.Text)
	}
	out := make([]Exchange, len(exchanges))
	for i, p := range all {
		out[i].Request = p.req[0].Marshal()
		for _, n := range p.resp {
			out[i].Responses = append(out[i].Responses, n.Marshal())
		}
	}
	return out, nil
}

// walk replaces string values by their key's class. top marks the
// envelope level, whose "id" is the request id (kept).
func (r *redactor) walk(n *jsonshape.Node, key string, top bool, messages *[]*jsonshape.Node) {
	switch n.Kind {
	case jsonshape.Object:
		for i, k := range n.Keys {
			v := n.Vals[i]
			if top && k == "id" {
				continue
			}
			if k == "message" && v.Kind == jsonshape.String {
				*messages = append(*messages, v)
				continue
			}
			r.walk(v, k, false, messages)
		}
	case jsonshape.Array:
		for _, v := range n.Items {
			r.walk(v, key, false, messages)
		}
	case jsonshape.String:
		n.Text = r.value(key, n.Text)
	}
}

func (r *redactor) value(key, v string) string {
	switch {
	case keepKeys[key], v == "":
		return v
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
		if _, err := strconv.Atoi(v); err == nil {
			return v // Herdr's default tab label, a position
		}
		return r.stand("label", v)
	case key == "value":
		return r.stand("session", v)
	}
	return r.stand("value", v)
}
