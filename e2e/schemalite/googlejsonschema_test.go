package schemalite_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/herdr-link/herdr-link/internal/schemacheck"
	"github.com/herdr-link/herdr-link/internal/schemalite"
)

// googleValidator validates socket lines with github.com/google/jsonschema-go,
// the library that could replace the hand-written schemalite. It is only
// built by this test.
type googleValidator struct {
	success, failure, event, subEvent *jsonschema.Resolved
}

func loadGoogle(path string) (*googleValidator, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	v := &googleValidator{}
	for _, x := range []struct {
		into **jsonschema.Resolved
		name string
	}{{&v.success, "success_response"}, {&v.failure, "error_response"}, {&v.event, "event"}, {&v.subEvent, "subscription_event"}} {
		// The document's references are pointers from its root
		// ("#/schemas/<name>/$defs/…"); the library resolves them only
		// from the schema's own root, so they are rewritten to that.
		sub := strings.ReplaceAll(string(doc.Schemas[x.name]), `"#/schemas/`+x.name+`/`, `"#/`)
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(sub), &s); err != nil {
			return nil, fmt.Errorf("%s: %w", x.name, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", x.name, err)
		}
		*x.into = r
	}
	return v, nil
}

func (v *googleValidator) Line(line []byte) error {
	var inst any
	if err := json.Unmarshal(line, &inst); err != nil {
		return err
	}
	obj, ok := inst.(map[string]any)
	if !ok {
		return errors.New("not an object")
	}
	var r *jsonschema.Resolved
	switch {
	case obj["result"] != nil:
		r = v.success
	case obj["error"] != nil:
		r = v.failure
	case obj["event"] != nil:
		r = v.event
		if name, _ := obj["event"].(string); strings.Contains(name, ".") {
			r = v.subEvent
		}
	default:
		return errors.New("neither a response nor an event")
	}
	return r.Validate(inst)
}

// TestGoogleJSONSchemaAgainstTheLibrary keeps the measurement behind the
// decision in schemalite's package doc honest: google/jsonschema-go gives
// the full validator's verdict on every simulator line and every mutation
// (so correctness was not why schemalite stayed). If a version of it ever
// disagrees, this fails and the note must be revisited.
func TestGoogleJSONSchemaAgainstTheLibrary(t *testing.T) {
	_, lib := load(t)
	p, _ := schemacheck.Find()
	g, err := loadGoogle(p)
	if err != nil {
		t.Fatalf("google/jsonschema-go cannot load Herdr's schema document: %v", err)
	}
	lines := corpus(t)
	var checked, disagree, falseAccept, falseReject int
	var example string
	for _, l := range lines {
		for _, m := range append(append([][]byte{l}, mutations(l)...), numberMutations(l)...) {
			e1, e2 := g.Line(m), lib.Line(m)
			checked++
			if (e1 == nil) != (e2 == nil) {
				disagree++
				if e1 == nil {
					falseAccept++
				} else {
					falseReject++
				}
				if example == "" {
					example = fmt.Sprintf("%s\n  google: %v\n  library: %v", m, e1, e2)
				}
			}
		}
	}
	t.Logf("google/jsonschema-go vs the full validator: %d lines checked, %d verdicts differ", checked, disagree)
	if disagree > 0 {
		t.Errorf("google/jsonschema-go disagrees with the full validator on %d of %d lines (%d wrongly accepted, %d wrongly rejected); first: %s", disagree, checked, falseAccept, falseReject, example)
	}
}

// numberMutations puts out-of-range and non-integer numbers where the line
// has numbers, for the integer formats (uint32, uint64, …) and minimums.
func numberMutations(line []byte) [][]byte {
	var v any
	_ = json.Unmarshal(line, &v)
	var out [][]byte
	var walk func(x any)
	walk = func(x any) {
		switch m := x.(type) {
		case map[string]any:
			for k, val := range m {
				if _, isNum := val.(float64); isNum {
					for _, bad := range []any{-1, 1.5, 1e20, 4294967296} {
						m[k] = bad
						b, _ := json.Marshal(v)
						out = append(out, b)
					}
					m[k] = val
					continue
				}
				walk(val)
			}
		case []any:
			for _, e := range m {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// BenchmarkLoad: what `herdr-sim validate` and `herdr-sim serve --validate`
// pay once, per validator.
func BenchmarkLoad(b *testing.B) {
	p, err := schemacheck.Find()
	if err != nil {
		b.Skip(err)
	}
	b.Run("schemalite", func(b *testing.B) {
		for b.Loop() {
			if _, err := schemalite.Load(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("google-jsonschema-go", func(b *testing.B) {
		for b.Loop() {
			if _, err := loadGoogle(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLine: validating one agent.list answer.
func BenchmarkLine(b *testing.B) {
	p, err := schemacheck.Find()
	if err != nil {
		b.Skip(err)
	}
	lite, _ := schemalite.Load(p)
	g, _ := loadGoogle(p)
	line := []byte(`{"id":"1","result":{"type":"agent_list","agents":[]}}`)
	for _, l := range corpus(b) {
		if len(l) > len(line) {
			line = l
		}
	}
	b.Run("schemalite", func(b *testing.B) {
		for b.Loop() {
			_ = lite.Line(line)
		}
	})
	b.Run("google-jsonschema-go", func(b *testing.B) {
		for b.Loop() {
			_ = g.Line(line)
		}
	})
}
