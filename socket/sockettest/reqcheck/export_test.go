package reqcheck

import (
	"bytes"
	"github.com/google/go-cmp/cmp"
	"reflect"
	"testing"

	"github.com/herdr-link/herdr-link/schema"
)

// CheckParsers compares the fast and the exact request parsers on line.
func CheckParsers(t *testing.T, line []byte) {
	line = bytes.TrimSpace(line)
	fast, ok := fastParse(line)
	slow, err := slowParse(line)
	if ok && err != nil {
		t.Fatalf("fast path accepts %q, serde path rejects it: %v", line, err)
	}
	if ok && (fast.ID != slow.ID || fast.Method != slow.Method || !bytes.Equal(fast.Params, slow.Params)) {
		t.Fatalf("parsers disagree on %q (-serde +fast):\n%s", line, cmp.Diff(slow, fast))
	}
}

// UnlistedEnums names the named string types reachable from the params of
// methods that the params checker has no values for.
func UnlistedEnums(methods []string) []string {
	var out []string
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
		case t.Kind() == reflect.String && t.Name() != "string":
			if _, ok := enumValues[t]; !ok {
				out = append(out, t.Name())
			}
		case isUnion(t):
			for _, vt := range union(t).variants {
				walk(vt)
			}
		case t.Kind() == reflect.Struct:
			for _, f := range fields(t) {
				walk(f.typ)
			}
		}
	}
	for _, m := range methods {
		if p, ok := schema.NewParams(m); ok {
			walk(reflect.TypeOf(p).Elem())
		}
	}
	return out
}

// RequiredFields is what the params checker requires of method's params.
func RequiredFields(method string) []string {
	p, ok := schema.NewParams(method)
	if !ok {
		return nil
	}
	var out []string
	for _, f := range fields(reflect.TypeOf(p).Elem()) {
		if f.required {
			out = append(out, f.name)
		}
	}
	return out
}
