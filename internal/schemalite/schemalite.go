// Package schemalite validates JSON against Herdr's API schema document
// with no dependency and no start-up cost. It implements the JSON Schema
// (2020-12) keywords that document uses — type, properties, required,
// additionalProperties, items, enum, const, oneOf, anyOf, $ref, minimum,
// maximum, pattern, maxProperties, propertyNames and the integer formats —
// and reports every mismatch with its JSON pointer.
//
// herdr-sim uses it for `validate` and `serve --validate` (a full
// validator library costs several milliseconds of start-up). Its tests check it against a complete validator library on
// every line the simulator writes and on mutations of them.
//
// Why not github.com/google/jsonschema-go, already in the module graph
// (measured 2026-12-01 on the project's 2-vCPU machine, `go test
// -bench . ./internal/schemalite/` and GODEBUG=inittrace=1):
//   - correctness is not the reason: it gives the full validator's verdict
//     on all 3,162 simulator lines and mutations
//     (TestGoogleJSONSchemaAgainstTheLibrary), once the document's
//     root-relative $refs are rewritten, and its package init costs
//     0.16 ms (santhosh-tekuri/jsonschema: 9.7–29 ms);
//   - loading Herdr's 255 KB document takes 31–36 ms and 7.4 MB against
//     3.5–3.9 ms and 1.9 MB here, and a line validates in 0.58–0.70 ms
//     against 0.41–0.45 ms;
//   - its error for a wrong result names no field: "oneOf: did not validate
//     against any of [<anonymous schema> …×58]", where this package says
//     "at /result/agent/pane_id: got integer, want string" — herdr-sim
//     validate exists to print exactly that.
package schemalite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/herdr-link/herdr-link/internal/limited"
)

// Validator checks socket lines against one schema document.
type Validator struct {
	doc     map[string]any
	mu      sync.Mutex
	regexps map[string]*regexp.Regexp
	count   atomic.Int64
}

// MaxDocument bounds a schema document (Herdr's are about 300 KB).
const MaxDocument = 64 << 20

// Load reads a schema document.
func Load(path string) (*Validator, error) {
	data, err := limited.ReadFile(path, MaxDocument)
	if err != nil {
		return nil, fmt.Errorf("schemalite: %w", err)
	}
	return Parse(data)
}

// Parse reads a schema document from data.
func Parse(data []byte) (*Validator, error) {
	var doc map[string]any
	if err := decode(data, &doc); err != nil {
		return nil, fmt.Errorf("schemalite: %w", err)
	}
	schemas, ok := doc["schemas"].(map[string]any)
	if !ok {
		return nil, errors.New("schemalite: not a Herdr API schema document (no schemas)")
	}
	for _, k := range []string{"success_response", "error_response", "event", "subscription_event"} {
		if _, ok := schemas[k]; !ok {
			return nil, fmt.Errorf("schemalite: the document has no %q schema", k)
		}
	}
	return &Validator{doc: doc, regexps: map[string]*regexp.Regexp{}}, nil
}

func decode(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// Count is how many lines passed.
func (v *Validator) Count() int64 { return v.count.Load() }

// Mismatch is one place where an instance breaks the schema.
type Mismatch struct {
	Path string // JSON pointer into the instance
	Msg  string
}

// Error lists mismatches, one per line.
type Error []Mismatch

func (e Error) Error() string {
	var b strings.Builder
	for i, m := range e {
		if i > 0 {
			b.WriteByte('\n')
		}
		path := m.Path
		if path == "" {
			path = "/"
		}
		fmt.Fprintf(&b, "at %s: %s", path, m.Msg)
	}
	return b.String()
}

// Line validates a success response, an error response or an event line.
func (v *Validator) Line(line []byte) error {
	var inst any
	if err := decode(line, &inst); err != nil {
		return fmt.Errorf("schemalite: not JSON: %w", err)
	}
	obj, ok := inst.(map[string]any)
	if !ok {
		return errors.New("schemalite: not a JSON object")
	}
	root := ""
	switch {
	case obj["result"] != nil:
		root = "success_response"
	case obj["error"] != nil:
		root = "error_response"
	case obj["event"] != nil:
		root = "event"
		if name, _ := obj["event"].(string); strings.Contains(name, ".") {
			root = "subscription_event"
		}
	default:
		return errors.New("schemalite: neither a response nor an event")
	}
	if errs := v.Validate(root, inst); len(errs) > 0 {
		return errs
	}
	v.count.Add(1)
	return nil
}

// Validate checks inst against the root schema named root.
func (v *Validator) Validate(root string, inst any) Error {
	s := v.doc["schemas"].(map[string]any)[root]
	var errs Error
	v.check(s, inst, "", &errs, 0)
	return errs
}

func (v *Validator) resolve(ref string) (any, error) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("unsupported $ref %q", ref)
	}
	var cur any = v.doc
	for _, part := range strings.Split(ref[2:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
		cur, ok = m[part]
		if !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
	}
	return cur, nil
}

func typeName(inst any) string {
	switch x := inst.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return "integer"
		}
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && !math.IsInf(f, 0) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func typeOK(want, got string) bool {
	return want == got || (want == "number" && got == "integer")
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

var formatRange = map[string][2]float64{
	"uint8": {0, math.MaxUint8}, "uint16": {0, math.MaxUint16}, "uint32": {0, math.MaxUint32}, "uint64": {0, math.MaxUint64},
	"int8": {math.MinInt8, math.MaxInt8}, "int16": {math.MinInt16, math.MaxInt16}, "int32": {math.MinInt32, math.MaxInt32}, "int64": {math.MinInt64, math.MaxInt64},
}

// check validates inst against schema s, appending mismatches.
//
// Long: one switch over the JSON Schema keywords Herdr's document uses, in
// the specification's order; splitting it scatters one validation step.
func (v *Validator) check(s any, inst any, path string, errs *Error, depth int) {
	if depth > 64 {
		*errs = append(*errs, Mismatch{path, "schema nests too deeply"})
		return
	}
	add := func(format string, a ...any) { *errs = append(*errs, Mismatch{path, fmt.Sprintf(format, a...)}) }
	switch b := s.(type) {
	case bool:
		if !b {
			add("no value is allowed here")
		}
		return
	case map[string]any:
	default:
		return
	}
	sch := s.(map[string]any)
	if ref, ok := sch["$ref"].(string); ok {
		target, err := v.resolve(ref)
		if err != nil {
			add("%v", err)
			return
		}
		v.check(target, inst, path, errs, depth+1)
	}
	if t, ok := sch["type"]; ok {
		got := typeName(inst)
		var wants []string
		switch x := t.(type) {
		case string:
			wants = []string{x}
		case []any:
			for _, w := range x {
				if ws, ok := w.(string); ok {
					wants = append(wants, ws)
				}
			}
		}
		ok := false
		for _, w := range wants {
			ok = ok || typeOK(w, got)
		}
		if !ok {
			add("got %s, want %s", got, strings.Join(wants, " or "))
			return
		}
	}
	if c, ok := sch["const"]; ok && !equalJSON(c, inst) {
		add("value must be %s", mustJSON(c))
	}
	if e, ok := sch["enum"].([]any); ok {
		found := false
		for _, x := range e {
			found = found || equalJSON(x, inst)
		}
		if !found {
			add("value %s is not one of %s", mustJSON(inst), mustJSON(e))
		}
	}
	if n, ok := inst.(json.Number); ok {
		f, _ := n.Float64()
		if m, ok := sch["minimum"].(json.Number); ok {
			if mf, _ := m.Float64(); f < mf {
				add("%s is less than the minimum %s", n, m)
			}
		}
		if m, ok := sch["maximum"].(json.Number); ok {
			if mf, _ := m.Float64(); f > mf {
				add("%s is more than the maximum %s", n, m)
			}
		}
		if fm, ok := sch["format"].(string); ok {
			if r, ok := formatRange[fm]; ok && (f < r[0] || f > r[1] || typeName(inst) != "integer") {
				add("%s is not a valid %s", n, fm)
			}
		}
	}
	if str, ok := inst.(string); ok {
		if p, ok := sch["pattern"].(string); ok && !v.match(p, str) {
			add("%q does not match the pattern %s", str, p)
		}
	}
	if arr, ok := inst.([]any); ok {
		if items, ok := sch["items"]; ok {
			for i, it := range arr {
				v.check(items, it, path+"/"+strconv.Itoa(i), errs, depth+1)
			}
		}
	}
	if obj, ok := inst.(map[string]any); ok {
		v.checkObject(sch, obj, path, errs, depth)
	}
	if one, ok := sch["oneOf"].([]any); ok {
		matches := 0
		var best Error
		for _, alt := range one {
			var sub Error
			v.check(alt, inst, path, &sub, depth+1)
			if len(sub) == 0 {
				matches++
			} else if best == nil || closer(sub, best) {
				best = sub
			}
		}
		switch {
		case matches == 0:
			add("matches none of the %d alternatives; the closest fails with: %s", len(one), best.Error())
		case matches > 1:
			add("matches %d alternatives, want exactly one", matches)
		}
	}
	if anyOf, ok := sch["anyOf"].([]any); ok {
		ok := false
		var best Error
		for _, alt := range anyOf {
			var sub Error
			v.check(alt, inst, path, &sub, depth+1)
			if len(sub) == 0 {
				ok = true
				break
			}
			if best == nil || closer(sub, best) {
				best = sub
			}
		}
		if !ok {
			add("matches none of the %d alternatives; the closest fails with: %s", len(anyOf), best.Error())
		}
	}
}

// closer reports whether the failures a describe a nearer miss than b: an
// alternative whose tag (a const) matched beats one whose tag did not,
// then fewer failures win.
func closer(a, b Error) bool {
	ca, cb := constMisses(a), constMisses(b)
	if ca != cb {
		return ca < cb
	}
	return len(a) < len(b)
}

func constMisses(e Error) int {
	n := 0
	for _, m := range e {
		if strings.HasPrefix(m.Msg, "value must be") {
			n++
		}
	}
	return n
}

func (v *Validator) checkObject(sch map[string]any, obj map[string]any, path string, errs *Error, depth int) {
	props, _ := sch["properties"].(map[string]any)
	if req, ok := sch["required"].([]any); ok {
		var missing []string
		for _, r := range req {
			if name, ok := r.(string); ok {
				if _, ok := obj[name]; !ok {
					missing = append(missing, name)
				}
			}
		}
		if len(missing) > 0 {
			*errs = append(*errs, Mismatch{path, "missing properties " + strings.Join(missing, ", ")})
		}
	}
	if m, ok := sch["maxProperties"].(json.Number); ok {
		if n, _ := m.Int64(); int64(len(obj)) > n {
			*errs = append(*errs, Mismatch{path, fmt.Sprintf("%d properties, at most %d allowed", len(obj), n)})
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		child := path + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
		if pn, ok := sch["propertyNames"]; ok {
			v.check(pn, k, child, errs, depth+1)
		}
		if ps, ok := props[k]; ok {
			v.check(ps, obj[k], child, errs, depth+1)
			continue
		}
		if ap, ok := sch["additionalProperties"]; ok {
			v.check(ap, obj[k], child, errs, depth+1)
		}
	}
}

func (v *Validator) match(pattern, s string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	re, ok := v.regexps[pattern]
	if !ok {
		var err error
		re, err = regexp.Compile(pattern)
		if err != nil {
			return true // a pattern Go cannot compile is not checked
		}
		v.regexps[pattern] = re
	}
	return re.MatchString(s)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
