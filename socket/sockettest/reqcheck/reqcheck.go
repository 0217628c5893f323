package reqcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
)

// Herdr decodes a request with serde: `Request { id, #[flatten] method }`.
// Because of the flatten, everything but the id is buffered first and the
// method and its params are decoded afterwards, so every error about them
// is reported at the end of the line (where the reader stands) and worded
// the way serde words it. checkParams reproduces that decoding for the
// params of any method: required fields, value types, integer ranges, enum
// values and the tags of internally tagged unions.

// enumValues lists the values of the string enums that appear in params,
// in Rust declaration order (serde's "expected one of" order). A test
// checks that every named string type reachable from an implemented
// method's params is listed.
var enumValues = map[reflect.Type][]string{
	reflect.TypeOf(schema.AgentStatus("")):    {"idle", "working", "blocked", "done", "unknown"},
	reflect.TypeOf(schema.ReadSource("")):     {"visible", "recent", "recent_unwrapped", "detection"},
	reflect.TypeOf(schema.ReadFormat("")):     {"text", "ansi"},
	reflect.TypeOf(schema.SplitDirection("")): {"right", "down"},
	// pane.report_agent's state (no done: Herdr derives it).
	reflect.TypeOf(schema.PaneAgentState("")): {"idle", "working", "blocked", "unknown"},
	// pane.split's right_click (handlers_start.go).
	reflect.TypeOf(schema.PaneRightClickTarget("")): {"herdr", "pane"},
}

// defaulted are params fields without omitempty that serde fills with a
// default when absent (`#[serde(default)]`), "Type.field".
var defaulted = map[string]bool{"PaneMoveParams.focus": true, "PaneSplitParams.focus": true, "TabCreateParams.focus": true}

var rawMessageType = reflect.TypeOf(jsonx.RawMessage(nil))

// isUnion reports whether t is a generated tagged union: pointer fields,
// one per variant, and Unknown.
func isUnion(t reflect.Type) bool {
	if t.Kind() != reflect.Struct || t.NumField() < 2 {
		return false
	}
	f, ok := t.FieldByName("Unknown")
	return ok && f.Type == rawMessageType
}

type unionInfo struct {
	tags     []string
	variants map[string]reflect.Type
}

// unions holds the tags of every union type reachable from a method's
// params, built once: a pure function of the schema's types.
var unions = sync.OnceValue(func() map[reflect.Type]*unionInfo {
	m := map[reflect.Type]*unionInfo{}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if seen[t] {
			return
		}
		seen[t] = true
		switch {
		case isUnion(t):
			u := unionOf(t)
			m[t] = u
			for _, vt := range u.variants {
				walk(vt)
			}
		case t.Kind() == reflect.Struct:
			for _, f := range fields(t) {
				walk(f.typ)
			}
		}
	}
	for _, meth := range schema.Methods {
		if p, ok := schema.NewParams(meth.Name); ok {
			walk(reflect.TypeOf(p).Elem())
		}
	}
	return m
})

// union lists the tags of union type t in declaration order.
func union(t reflect.Type) *unionInfo {
	if u, ok := unions()[t]; ok {
		return u
	}
	return unionOf(t)
}

// unionOf reads the tags of union type t, using the generated Tag method.
func unionOf(t reflect.Type) *unionInfo {
	u := &unionInfo{variants: map[string]reflect.Type{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Type.Kind() != reflect.Pointer {
			continue
		}
		v := reflect.New(t)
		v.Elem().Field(i).Set(reflect.New(f.Type.Elem()))
		tagger, ok := v.Interface().(interface{ Tag() string })
		if !ok {
			tagger, ok = v.Elem().Interface().(interface{ Tag() string })
		}
		if !ok {
			continue
		}
		tag := tagger.Tag()
		u.tags = append(u.tags, tag)
		u.variants[tag] = f.Type.Elem()
	}
	return u
}

type jsonField struct {
	name     string
	typ      reflect.Type
	required bool
}

// fields lists the JSON fields of struct t with whether serde requires
// them: a field without omitempty that is not a pointer and has no serde
// default.
func fields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "" || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		k := f.Type.Kind()
		req := !strings.Contains(opts, "omitempty") && k != reflect.Pointer && !defaulted[t.Name()+"."+name]
		out = append(out, jsonField{name: name, typ: f.Type, required: req})
	}
	return out
}

// checkParams checks raw (the params value) against method's params type
// as serde would and returns serde's message, or "" when it decodes.
func checkParams(method string, raw []byte) string {
	proto, ok := schema.NewParams(method)
	if !ok {
		return ""
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "" // syntax errors are reported by the envelope parser
	}
	return checkValue(v, reflect.TypeOf(proto).Elem())
}

// Long: one switch over the Go kinds a params type is made of, mirroring
// serde's checks.
func checkValue(v any, t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		if v == nil {
			return ""
		}
		return checkValue(v, t.Elem())
	}
	if vals, ok := enumValues[t]; ok {
		s, isStr := v.(string)
		if !isStr {
			return "invalid type: " + unexpected(v) + ", expected variant identifier"
		}
		for _, x := range vals {
			if x == s {
				return ""
			}
		}
		return fmt.Sprintf("unknown variant `%s`, expected %s", s, oneOf(vals))
	}
	switch {
	case t == rawMessageType:
		return ""
	case isUnion(t):
		obj, ok := v.(map[string]any)
		if !ok {
			return "invalid type: " + unexpected(v) + ", expected internally tagged enum " + t.Name()
		}
		u := union(t)
		rawTag, ok := obj["type"]
		if !ok {
			return "missing field `type`"
		}
		tag, ok := rawTag.(string)
		if !ok {
			return "invalid type: " + unexpected(rawTag) + ", expected variant identifier"
		}
		vt, ok := u.variants[tag]
		if !ok {
			return fmt.Sprintf("unknown variant `%s`, expected %s", tag, oneOf(u.tags))
		}
		return checkStruct(obj, vt, true)
	}
	switch t.Kind() {
	case reflect.String:
		if _, ok := v.(string); !ok {
			return "invalid type: " + unexpected(v) + ", expected a string"
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return "invalid type: " + unexpected(v) + ", expected a boolean"
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return checkInteger(v, t)
	case reflect.Float32, reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			return "invalid type: " + unexpected(v) + ", expected " + rustName(t)
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return "invalid type: " + unexpected(v) + ", expected a sequence"
		}
		for _, e := range arr {
			if msg := checkValue(e, t.Elem()); msg != "" {
				return msg
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return "invalid type: " + unexpected(v) + ", expected a map"
		}
		for _, e := range obj {
			if msg := checkValue(e, t.Elem()); msg != "" {
				return msg
			}
		}
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			if arr, isArr := v.([]any); isArr && len(fields(t)) == 0 {
				_ = arr // an empty struct accepts a sequence too
				return ""
			}
			return "invalid type: " + unexpected(v) + ", expected struct " + t.Name()
		}
		return checkStruct(obj, t, false)
	}
	return ""
}

func checkStruct(obj map[string]any, t reflect.Type, variant bool) string {
	var missing string
	for _, f := range fields(t) {
		if variant && f.name == "type" {
			continue
		}
		fv, ok := obj[f.name]
		if !ok {
			if f.required && missing == "" {
				missing = f.name
			}
			continue
		}
		if msg := checkValue(fv, f.typ); msg != "" {
			return msg
		}
	}
	if missing != "" {
		return "missing field `" + missing + "`"
	}
	return ""
}

func checkInteger(v any, t reflect.Type) string {
	n, ok := v.(json.Number)
	if !ok {
		return "invalid type: " + unexpected(v) + ", expected " + rustName(t)
	}
	s := n.String()
	if strings.ContainsAny(s, ".eE") {
		return "invalid type: " + unexpected(v) + ", expected " + rustName(t)
	}
	bits := t.Bits()
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if u, err := strconv.ParseUint(s, 10, 64); err != nil || (bits < 64 && u > 1<<bits-1) {
			return "invalid value: integer `" + s + "`, expected " + rustName(t)
		}
	default:
		if i, err := strconv.ParseInt(s, 10, 64); err != nil || (bits < 64 && (i > 1<<(bits-1)-1 || i < -(1<<(bits-1)))) {
			return "invalid value: integer `" + s + "`, expected " + rustName(t)
		}
	}
	return ""
}

// rustName is the name serde uses for a primitive Go type.
func rustName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Uint:
		return "usize"
	case reflect.Int:
		return "isize"
	case reflect.Float32:
		return "f32"
	case reflect.Float64:
		return "f64"
	}
	k := t.Kind().String() // uint32, int64, …
	if strings.HasPrefix(k, "uint") {
		return "u" + k[4:]
	}
	return "i" + k[3:]
}

func oneOf(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = "`" + v + "`"
	}
	// serde's OneOf: one name, two joined by "or", more as a list.
	switch len(q) {
	case 0:
		return "nothing (there are no variants)"
	case 1:
		return q[0]
	case 2:
		return q[0] + " or " + q[1]
	}
	return "one of " + strings.Join(q, ", ")
}

// unexpected describes a decoded JSON value as serde's Unexpected does.
func unexpected(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean `" + strconv.FormatBool(x) + "`"
	case json.Number:
		s := x.String()
		if strings.ContainsAny(s, ".eE") {
			f, _ := x.Float64()
			if f == math.Trunc(f) && !strings.ContainsAny(s, "eE") {
				return "floating point `" + strconv.FormatFloat(f, 'f', 1, 64) + "`"
			}
			return "floating point `" + strconv.FormatFloat(f, 'g', -1, 64) + "`"
		}
		return "integer `" + s + "`"
	case string:
		return "string " + strconv.Quote(x)
	case []any:
		return "sequence"
	case map[string]any:
		return "map"
	}
	return "value"
}
