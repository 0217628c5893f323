// Package gen turns Herdr's API schema document (the output of
// `herdr api schema --json`) into Go source for package schema.
//
// Mapping rules:
//
//   - The five root schemas' $defs are merged by name. Every "$ref" is first
//     rewritten from "#/schemas/<root>/$defs/X" to "X"; two definitions with
//     the same name must then be identical, or generation fails.
//   - An object with properties becomes a struct. Property names are sorted
//     as in the document, except for the few types whose Rust field order
//     is known (serdeOrder); a union variant's tag, and a root response's
//     id, come first.
//     A required property is a plain field. An optional one gets
//     ",omitempty", and becomes a pointer when its zero value would be
//     ambiguous: nullable types, nested structs, and non-zero defaults
//     (so "false" is still sent when the server default is true).
//     An optional property with a null or zero default (serde's default
//     without skip_serializing_if) has no omitempty: Herdr always writes it.
//   - An object without properties is struct{}; one with only
//     additionalProperties is a map.
//   - A string enum is a named string type with one constant per value.
//     AgentStatus decodes any value it does not know as "unknown".
//   - integer maps by its format (uint32 → uint32, …; none → int64),
//     number to float64, boolean to bool, array to a slice.
//   - A oneOf whose variants are objects sharing one required string const
//     property is a tagged union: one struct per variant
//     (<Union><Tag>, or Result<Tag> for ResponseResult) and a union struct
//     with one pointer per variant, plus Unknown for tags this version does
//     not know. Any other oneOf or anyOf (except "X or null") is kept as raw
//     JSON.
//   - The request root's oneOf yields the method constants, the method →
//     params table and NewParams.
package gen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/format"
	"regexp"
	"sort"
	"strings"
)

// Files maps output file names to their contents.
type Files map[string][]byte

// Options name the input in the generated header.
type Options struct {
	// InputName is the file name recorded in the header.
	InputName string
	// Package is the Go package name; "schema" when empty.
	Package string
}

type node struct {
	Ref                  string                     `json:"$ref"`
	Type                 typeList                   `json:"type"`
	Format               string                     `json:"format"`
	Properties           map[string]*node           `json:"properties"`
	Required             []string                   `json:"required"`
	Items                *node                      `json:"items"`
	AdditionalProperties json.RawMessage            `json:"additionalProperties"`
	OneOf                []*node                    `json:"oneOf"`
	AnyOf                []*node                    `json:"anyOf"`
	Enum                 []any                      `json:"enum"`
	Const                any                        `json:"const"`
	Default              json.RawMessage            `json:"default"`
	Description          string                     `json:"description"`
	Title                string                     `json:"title"`
	Defs                 map[string]json.RawMessage `json:"$defs"`
}

// UnmarshalJSON accepts the boolean schemas true and false as "any value".
func (n *node) UnmarshalJSON(b []byte) error {
	if s := strings.TrimSpace(string(b)); s == "true" || s == "false" {
		*n = node{}
		return nil
	}
	type plain node
	return json.Unmarshal(b, (*plain)(n))
}

type typeList []string

func (t *typeList) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '[' {
		var l []string
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		*t = l
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = []string{s}
	return nil
}

// base returns the non-null type and whether null is allowed.
func (t typeList) base() (string, bool) {
	var b string
	null := false
	for _, s := range t {
		if s == "null" {
			null = true
		} else {
			b = s
		}
	}
	return b, null
}

type document struct {
	Protocol      int                        `json:"protocol"`
	SchemaVersion int                        `json:"schema_version"`
	Schemas       map[string]json.RawMessage `json:"schemas"`
}

var refRE = regexp.MustCompile(`#/schemas/[a-z_]+/\$defs/`)

// Generate produces the Go files for the schema document in input.
func Generate(input []byte, opt Options) (Files, error) {
	if opt.Package == "" {
		opt.Package = "schema"
	}
	if opt.InputName == "" {
		opt.InputName = "herdr-api.schema.json"
	}
	var doc document
	if err := json.Unmarshal(input, &doc); err != nil {
		return nil, fmt.Errorf("parse schema document: %w", err)
	}
	if doc.Protocol == 0 || len(doc.Schemas) == 0 {
		return nil, fmt.Errorf("not a Herdr API schema document (no protocol or schemas)")
	}
	sum := sha256.Sum256(input)
	g := &generator{
		doc:     doc,
		sha:     hex.EncodeToString(sum[:]),
		opt:     opt,
		defs:    map[string]*node{},
		rawDefs: map[string]string{},
		emitted: map[string]bool{},
	}
	if err := g.load(); err != nil {
		return nil, err
	}
	return g.run()
}

type generator struct {
	doc     document
	sha     string
	opt     Options
	defs    map[string]*node
	rawDefs map[string]string
	roots   map[string]*node
	emitted map[string]bool
	types   bytes.Buffer
	unions  []string
}

func canonical(raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v) // encoding/json sorts map keys
	if err != nil {
		return "", err
	}
	return refRE.ReplaceAllString(string(b), ""), nil
}

func (g *generator) load() error {
	g.roots = map[string]*node{}
	rootNames := make([]string, 0, len(g.doc.Schemas))
	for name := range g.doc.Schemas {
		rootNames = append(rootNames, name)
	}
	sort.Strings(rootNames)
	for _, rn := range rootNames {
		raw := g.doc.Schemas[rn]
		c, err := canonical(raw)
		if err != nil {
			return fmt.Errorf("schema %s: %w", rn, err)
		}
		var root node
		if err := json.Unmarshal([]byte(c), &root); err != nil {
			return fmt.Errorf("schema %s: %w", rn, err)
		}
		g.roots[rn] = &root
		for dn, draw := range root.Defs {
			dc, err := canonical(draw)
			if err != nil {
				return err
			}
			if prev, ok := g.rawDefs[dn]; ok {
				if prev != dc {
					return fmt.Errorf("$defs %s differs between schemas (second seen in %s)", dn, rn)
				}
				continue
			}
			var n node
			if err := json.Unmarshal([]byte(dc), &n); err != nil {
				return fmt.Errorf("$defs %s: %w", dn, err)
			}
			g.rawDefs[dn] = dc
			g.defs[dn] = &n
		}
	}
	return nil
}

func (g *generator) header() string {
	return fmt.Sprintf("// Code generated by schema/gen from %s (protocol %d, sha256 %s). DO NOT EDIT.\n\n", g.opt.InputName, g.doc.Protocol, g.sha)
}

func (g *generator) run() (Files, error) {
	// Root object schemas become types named by their title.
	for _, rn := range []string{"error_response", "success_response", "event", "subscription_event"} {
		root, ok := g.roots[rn]
		if !ok {
			return nil, fmt.Errorf("schema document has no %q schema", rn)
		}
		if root.Title == "" {
			return nil, fmt.Errorf("schema %s has no title", rn)
		}
		r := *root
		r.Defs = nil
		if prev, ok := g.defs[root.Title]; ok {
			_ = prev // a root that repeats a $def (EventEnvelope) is emitted once
		} else {
			g.defs[root.Title] = &r
		}
	}
	names := make([]string, 0, len(g.defs))
	for n := range g.defs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := g.emitDef(n, g.defs[n]); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
	}
	methods, err := g.methods()
	if err != nil {
		return nil, err
	}
	files := Files{}
	typesSrc := g.header() + "package " + g.opt.Package + "\n\nimport \"github.com/herdr-link/herdr-link/internal/jsonx\"\n\n" + g.types.String()
	for name, src := range map[string]string{"types_gen.go": typesSrc, "methods_gen.go": methods} {
		out, err := format.Source([]byte(src))
		if err != nil {
			return nil, fmt.Errorf("format %s: %w\n%s", name, err, src)
		}
		files[name] = out
	}
	return files, nil
}
