// Package schemacheck validates Herdr socket lines against Herdr's
// committed JSON Schema document with a real JSON Schema (2020-12)
// validator. Tests use it to prove that every line the simulator writes is
// one real Herdr could write.
package schemacheck

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/herdr-link/herdr-link/internal/limited"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// EnvSchema names a schema document to use instead of the one found beside
// the repository.
const EnvSchema = "HERDR_API_SCHEMA"

// DefaultName is the committed protocol-20 document (Herdr 0.8.2).
const DefaultName = "herdr-api.schema.protocol-20.json"

// Validator checks response, error and event lines.
type Validator struct {
	success, failure, event, subEvent *jsonschema.Schema
	count                             atomic.Int64
}

// Find returns the schema document's path: $HERDR_API_SCHEMA, or
// ../shared/herdr-api/<DefaultName> found from the working directory
// upwards.
func Find() (string, error) {
	if p := os.Getenv(EnvSchema); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for i := 0; i < 6; i++ {
		p := filepath.Join(dir, "..", "shared", "herdr-api", DefaultName)
		if _, err := os.Stat(p); err == nil {
			return filepath.Clean(p), nil
		}
		dir = filepath.Dir(dir)
	}
	return "", fmt.Errorf("schemacheck: %s not found in ../shared/herdr-api above the working directory (set %s)", DefaultName, EnvSchema)
}

// Load compiles the schema document at path.
func Load(path string) (*Validator, error) {
	data, err := limited.ReadFile(path, 64<<20)
	if err != nil {
		return nil, fmt.Errorf("schemacheck: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("schemacheck: %s: %w", path, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "file:///herdr-api.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	v := &Validator{}
	for _, x := range []struct {
		into **jsonschema.Schema
		ptr  string
	}{{&v.success, "success_response"}, {&v.failure, "error_response"}, {&v.event, "event"}, {&v.subEvent, "subscription_event"}} {
		s, err := c.Compile(url + "#/schemas/" + x.ptr)
		if err != nil {
			return nil, fmt.Errorf("schemacheck: compile %s: %w", x.ptr, err)
		}
		*x.into = s
	}
	return v, nil
}

// Count is how many lines passed.
func (v *Validator) Count() int64 { return v.count.Load() }

// Line validates one socket line: a success response, an error response,
// or an event envelope (plain or subscription).
func (v *Validator) Line(line []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return fmt.Errorf("schemacheck: not JSON: %w", err)
	}
	obj, ok := inst.(map[string]any)
	if !ok {
		return errors.New("schemacheck: not a JSON object")
	}
	var s *jsonschema.Schema
	switch {
	case obj["result"] != nil:
		s = v.success
	case obj["error"] != nil:
		s = v.failure
	case obj["event"] != nil:
		s = v.event
		if name, _ := obj["event"].(string); bytes.ContainsRune([]byte(name), '.') {
			s = v.subEvent
		}
	default:
		return errors.New("schemacheck: neither a response nor an event")
	}
	if err := s.Validate(inst); err != nil {
		return err
	}
	v.count.Add(1)
	return nil
}
