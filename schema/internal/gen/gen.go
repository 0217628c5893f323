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
	"strconv"
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

var initialisms = map[string]string{
	"id": "ID", "ids": "IDs", "url": "URL", "api": "API", "json": "JSON", "pid": "PID",
	"tty": "TTY", "ms": "MS", "ui": "UI", "ansi": "ANSI", "ttl": "TTL", "uri": "URI",
	"cwd": "CWD", "os": "OS", "px": "PX", "rgb": "RGB", "rgba": "RGBA", "bgra": "BGRA", "png": "PNG",
}

// Pascal converts snake, kebab and dotted names to Go's exported form.
func Pascal(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool {
		return r == '_' || r == '-' || r == '.' || r == ' ' || r == ':' || r == '/'
	}) {
		if up, ok := initialisms[strings.ToLower(part)]; ok {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	out := b.String()
	if out == "" || (out[0] >= '0' && out[0] <= '9') {
		out = "V" + out
	}
	return out
}

func comment(w *bytes.Buffer, indent, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	for _, line := range strings.Split(text, "\n") {
		fmt.Fprintf(w, "%s// %s\n", indent, strings.TrimRight(line, " "))
	}
}

func (g *generator) emitDef(name string, n *node) error {
	if g.emitted[name] {
		return nil
	}
	g.emitted[name] = true
	w := &g.types
	switch {
	case len(n.Enum) > 0:
		return g.emitEnum(name, n)
	case len(n.OneOf) > 0:
		if tag, ok := g.unionTag(n.OneOf); ok {
			return g.emitUnion(name, n, tag)
		}
		comment(w, "", n.Description)
		fmt.Fprintf(w, "// %s is kept as raw JSON: the schema gives it no tag to switch on.\ntype %s = jsonx.RawMessage\n\n", name, name)
		return nil
	case len(n.AnyOf) > 0:
		comment(w, "", n.Description)
		fmt.Fprintf(w, "// %s is kept as raw JSON: its alternatives are not tagged.\ntype %s = jsonx.RawMessage\n\n", name, name)
		return nil
	}
	t, _ := n.Type.base()
	if t == "object" {
		return g.emitStruct(name, n, "", "")
	}
	gt, err := g.goType(name, n)
	if err != nil {
		return err
	}
	comment(w, "", n.Description)
	fmt.Fprintf(w, "type %s %s\n\n", name, gt)
	return nil
}

func (g *generator) emitEnum(name string, n *node) error {
	w := &g.types
	comment(w, "", n.Description)
	fmt.Fprintf(w, "type %s string\n\n", name)
	fmt.Fprintf(w, "// Values of %s.\nconst (\n", name)
	var vals []string
	for _, v := range n.Enum {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("enum value %v is not a string", v)
		}
		vals = append(vals, s)
		fmt.Fprintf(w, "\t%s%s %s = %q\n", name, Pascal(s), name, s)
	}
	w.WriteString(")\n\n")
	if name == "AgentStatus" {
		fmt.Fprintf(w, "// Known reports whether s is one of the statuses this schema defines.\nfunc (s %s) Known() bool {\n\tswitch s {\n\tcase ", name)
		for i, v := range vals {
			if i > 0 {
				w.WriteString(", ")
			}
			fmt.Fprintf(w, "%s%s", name, Pascal(v))
		}
		w.WriteString(":\n\t\treturn true\n\t}\n\treturn false\n}\n\n")
		fmt.Fprintf(w, `// UnmarshalText decodes a status; a value this schema does not define
// becomes %[1]sUnknown, so newer Herdr builds cannot break decoding.
func (s *%[1]s) UnmarshalText(b []byte) error {
	*s = %[1]s(b)
	if !s.Known() {
		*s = %[1]sUnknown
	}
	return nil
}

`, name)
	}
	return nil
}

type unionTag struct {
	prop string
	tags []string
}

// unionTag reports whether every variant is an object with the same
// required string const property.
func (g *generator) unionTag(variants []*node) (unionTag, bool) {
	var prop string
	var tags []string
	for i, v := range variants {
		if v.Ref != "" {
			v = g.defs[v.Ref]
			if v == nil {
				return unionTag{}, false
			}
		}
		found := ""
		for pn, p := range v.Properties {
			if _, ok := p.Const.(string); ok && contains(v.Required, pn) {
				if found != "" && pn != prop {
					continue
				}
				found = pn
			}
		}
		if found == "" || (i > 0 && found != prop) {
			return unionTag{}, false
		}
		prop = found
		tags = append(tags, v.Properties[found].Const.(string))
	}
	return unionTag{prop: prop, tags: tags}, len(tags) > 0
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func variantName(union, tag string) string {
	if union == "ResponseResult" {
		return "Result" + Pascal(tag)
	}
	return union + Pascal(tag)
}

func (g *generator) emitUnion(name string, n *node, ut unionTag) error {
	w := &g.types
	type variant struct{ tag, typ, field string }
	var vs []variant
	seen := map[string]bool{}
	for i, v := range n.OneOf {
		tag := ut.tags[i]
		vn := variantName(name, tag)
		if v.Ref != "" {
			vn = v.Ref
			if err := g.emitDef(v.Ref, g.defs[v.Ref]); err != nil {
				return err
			}
		} else {
			if _, clash := g.defs[vn]; clash || seen[vn] {
				return fmt.Errorf("variant type name %s collides", vn)
			}
			if err := g.emitStruct(vn, v, ut.prop, tag); err != nil {
				return err
			}
		}
		seen[vn] = true
		vs = append(vs, variant{tag: tag, typ: vn, field: Pascal(tag)})
	}
	g.unions = append(g.unions, name)
	comment(w, "", n.Description)
	fmt.Fprintf(w, "//\n// %s is a union tagged by %q: exactly one field is set after decoding.\n// Unknown keeps a variant whose tag this schema version does not define.\ntype %s struct {\n", name, ut.prop, name)
	for _, v := range vs {
		fmt.Fprintf(w, "\t%s *%s\n", v.field, v.typ)
	}
	w.WriteString("\tUnknown jsonx.RawMessage\n}\n\n")
	// Tag constants.
	prefix := name + "Tag"
	if name == "ResponseResult" {
		prefix = "ResultType"
	}
	fmt.Fprintf(w, "// Tags of %s.\nconst (\n", name)
	for _, v := range vs {
		fmt.Fprintf(w, "\t%s%s = %q\n", prefix, v.field, v.tag)
	}
	w.WriteString(")\n\n")
	// Tag().
	fmt.Fprintf(w, "// Tag returns the %q of the variant that is set, or \"\" when none is.\nfunc (u %s) Tag() string {\n\tswitch {\n", ut.prop, name)
	for _, v := range vs {
		fmt.Fprintf(w, "\tcase u.%s != nil:\n\t\treturn %q\n", v.field, v.tag)
	}
	fmt.Fprintf(w, "\tcase u.Unknown != nil:\n\t\tvar probe struct{ T string `json:%q` }\n\t\t_ = jsonx.Unmarshal(u.Unknown, &probe)\n\t\treturn probe.T\n\t}\n\treturn \"\"\n}\n\n", ut.prop)
	// MarshalJSON.
	fmt.Fprintf(w, "// MarshalJSON encodes the variant that is set, with its tag.\nfunc (u %s) MarshalJSON() ([]byte, error) {\n\tswitch {\n", name)
	for _, v := range vs {
		fmt.Fprintf(w, "\tcase u.%s != nil:\n\t\tv := *u.%s\n\t\tv.%s = %q\n\t\treturn jsonx.Marshal(v)\n", v.field, v.field, Pascal(ut.prop), v.tag)
	}
	fmt.Fprintf(w, "\tcase u.Unknown != nil:\n\t\treturn u.Unknown, nil\n\t}\n\treturn nil, errEmptyUnion(%q)\n}\n\n", name)
	// UnmarshalJSON.
	fmt.Fprintf(w, "// UnmarshalJSON decodes the variant named by the tag.\nfunc (u *%s) UnmarshalJSON(b []byte) error {\n\tvar probe struct{ T string `json:%q` }\n\tif err := jsonx.Unmarshal(b, &probe); err != nil {\n\t\treturn err\n\t}\n\t*u = %s{}\n\tswitch probe.T {\n", name, ut.prop, name)
	for _, v := range vs {
		fmt.Fprintf(w, "\tcase %q:\n\t\tu.%s = new(%s)\n\t\treturn jsonx.Unmarshal(b, u.%s)\n", v.tag, v.field, v.typ, v.field)
	}
	w.WriteString("\t}\n\tu.Unknown = append(jsonx.RawMessage(nil), b...)\n\treturn nil\n}\n\n")
	return nil
}

// serdeOrder is the field order of Herdr's Rust structs, which the schema
// document (sorted keys) does not keep, for the types whose encoding users
// compare byte for byte (`herdr agent list` output). Taken from the facts
// sheet's examples and field tables (upstream src/api/schema/agents.rs,
// panes.rs, workspaces.rs, tabs.rs, response.rs, session.rs). Fields not
// listed follow in sorted order; the decoding side does not care.
var serdeOrder = map[string][]string{
	"AgentInfo": {"terminal_id", "name", "agent", "title", "display_agent", "state_labels", "tokens", "terminal_title",
		"terminal_title_stripped", "agent_status", "screen_detection_skipped", "agent_session", "workspace_id", "tab_id",
		"pane_id", "focused", "launch_pending", "interactive_ready", "state_change_seq", "cwd", "foreground_cwd", "revision"},
	"PaneInfo": {"pane_id", "terminal_id", "workspace_id", "tab_id", "focused", "cwd", "foreground_cwd", "label", "agent",
		"title", "terminal_title", "terminal_title_stripped", "display_agent", "agent_status", "state_labels", "tokens",
		"agent_session", "scroll", "revision"},
	"WorkspaceInfo":      {"workspace_id", "number", "label", "focused", "pane_count", "tab_count", "active_tab_id", "agent_status", "tokens", "worktree"},
	"TabInfo":            {"tab_id", "workspace_id", "number", "label", "focused", "pane_count", "agent_status"},
	"ResultPong":         {"type", "version", "protocol", "capabilities"},
	"SessionSnapshot":    {"version", "protocol", "focused_workspace_id", "focused_tab_id", "focused_pane_id", "workspaces", "tabs", "panes", "layouts", "agents"},
	"ErrorBody":          {"code", "message"},
	"ServerCapabilities": {"live_handoff", "detached_server_daemon"},
	// Nested in PaneInfo, AgentInfo and session.snapshot (the recorded
	// snapshot in ../shared/herdr-recorded shows their order).
	"AgentSessionInfo":   {"source", "agent", "kind", "value"},
	"PaneScrollInfo":     {"offset_from_bottom", "max_offset_from_bottom", "viewport_rows"},
	"PaneLayoutSnapshot": {"workspace_id", "tab_id", "zoomed", "area", "focused_pane_id", "panes", "splits"},
	"PaneLayoutPane":     {"pane_id", "focused", "rect"},
	"PaneLayoutRect":     {"x", "y", "width", "height"},
	"PaneLayoutSplit":    {"id", "direction", "ratio", "rect"},
}

func (g *generator) isRoot(name string) bool {
	for _, r := range g.roots {
		if r.Title == name && len(r.Properties) > 0 {
			return true
		}
	}
	return false
}

func (g *generator) emitStruct(name string, n *node, tagProp, tagValue string) error {
	w := &g.types
	var body bytes.Buffer
	props := make([]string, 0, len(n.Properties))
	for pn := range n.Properties {
		props = append(props, pn)
	}
	sort.Strings(props)
	if order, ok := serdeOrder[name]; ok {
		rank := map[string]int{}
		for i, f := range order {
			rank[f] = i + 1
		}
		sort.SliceStable(props, func(i, j int) bool {
			ri, rj := rank[props[i]], rank[props[j]]
			switch {
			case ri > 0 && rj > 0:
				return ri < rj
			case ri > 0:
				return true
			}
			return false
		})
	}
	if tagProp == "" && g.isRoot(name) {
		tagProp = "id" // responses start with their id, as serde writes them
	}
	if tagProp != "" {
		for i, p := range props {
			if p == tagProp {
				props = append([]string{p}, append(props[:i:i], props[i+1:]...)...)
				break
			}
		}
	}
	if len(props) == 0 {
		if len(n.AdditionalProperties) > 0 && string(n.AdditionalProperties) != "false" && string(n.AdditionalProperties) != "true" {
			gt, err := g.goType(name, n)
			if err != nil {
				return err
			}
			comment(w, "", n.Description)
			fmt.Fprintf(w, "type %s %s\n\n", name, gt)
			return nil
		}
		comment(w, "", n.Description)
		fmt.Fprintf(w, "type %s struct{}\n\n", name)
		return nil
	}
	fields := map[string]bool{}
	for _, pn := range props {
		p := n.Properties[pn]
		fn := Pascal(pn)
		if fields[fn] {
			return fmt.Errorf("field %s appears twice", fn)
		}
		fields[fn] = true
		required := contains(n.Required, pn)
		gt, err := g.fieldType(name+fn, p, required)
		if err != nil {
			return fmt.Errorf("property %s: %w", pn, err)
		}
		tag := pn
		if !required && (len(p.Default) == 0 || !isZeroJSON(p.Default)) {
			// serde writes a field with a zero or null default every time;
			// only fields without one (or with a non-zero default, which the
			// server fills in itself) may be left out.
			tag += ",omitempty"
		}
		comment(&body, "\t", p.Description)
		if pn == tagProp && tagValue != "" {
			comment(&body, "\t", fmt.Sprintf("%s is the union tag, always %q; the union's MarshalJSON sets it.", fn, tagValue))
		}
		fmt.Fprintf(&body, "\t%s %s `json:%q`\n", fn, gt, tag)
	}
	comment(w, "", n.Description)
	fmt.Fprintf(w, "type %s struct {\n%s}\n\n", name, body.String())
	return nil
}

// fieldType is goType plus the pointer rules for optional properties.
func (g *generator) fieldType(ctx string, p *node, required bool) (string, error) {
	gt, err := g.goType(ctx, p)
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(gt, "*") || strings.HasPrefix(gt, "[]") || strings.HasPrefix(gt, "map[") || gt == "jsonx.RawMessage" || gt == "any" {
		return gt, nil
	}
	if d := g.resolve(p); d != nil && (len(d.OneOf) > 0 || len(d.AnyOf) > 0) && !isNullableAnyOf(d) {
		if _, ok := g.unionTag(d.OneOf); !ok {
			return gt, nil // raw JSON alias
		}
	}
	_, null := p.Type.base()
	nonZeroDefault := len(p.Default) > 0 && !isZeroJSON(p.Default)
	isStruct := false
	if d := g.resolve(p); d != nil {
		t, _ := d.Type.base()
		isStruct = (t == "object") || len(d.OneOf) > 0
	}
	if null || nonZeroDefault || (!required && isStruct) || (len(p.Default) > 0 && string(p.Default) == "null") {
		return "*" + gt, nil
	}
	return gt, nil
}

func isZeroJSON(b json.RawMessage) bool {
	switch strings.TrimSpace(string(b)) {
	case "null", "false", "0", `""`, "[]", "{}":
		return true
	}
	return false
}

func isNullableAnyOf(n *node) bool {
	if len(n.AnyOf) != 2 {
		return false
	}
	for _, a := range n.AnyOf {
		if t, _ := a.Type.base(); t == "" && len(a.Type) == 1 && a.Type[0] == "null" {
			return true
		}
	}
	return false
}

func (g *generator) resolve(p *node) *node {
	if p.Ref != "" {
		return g.defs[p.Ref]
	}
	if isNullableAnyOf(p) {
		for _, a := range p.AnyOf {
			if a.Ref != "" {
				return g.defs[a.Ref]
			}
		}
	}
	return p
}

func (g *generator) goType(ctx string, p *node) (string, error) {
	if p.Ref != "" {
		d, ok := g.defs[p.Ref]
		if !ok {
			return "", fmt.Errorf("unresolved $ref %q", p.Ref)
		}
		_ = d
		return p.Ref, nil
	}
	if isNullableAnyOf(p) {
		for _, a := range p.AnyOf {
			if len(a.Type) == 1 && a.Type[0] == "null" {
				continue
			}
			inner, err := g.goType(ctx, a)
			if err != nil {
				return "", err
			}
			if strings.HasPrefix(inner, "*") || strings.HasPrefix(inner, "[]") || strings.HasPrefix(inner, "map[") || inner == "jsonx.RawMessage" {
				return inner, nil
			}
			if d := g.resolve(a); d != nil && (len(d.AnyOf) > 0 || (len(d.OneOf) > 0)) {
				if _, ok := g.unionTag(d.OneOf); !ok {
					return inner, nil
				}
			}
			return "*" + inner, nil
		}
	}
	if len(p.OneOf) > 0 || len(p.AnyOf) > 0 {
		if len(p.OneOf) > 0 {
			if _, ok := g.unionTag(p.OneOf); ok {
				if err := g.emitDef(ctx, p); err != nil {
					return "", err
				}
				return ctx, nil
			}
		}
		return "jsonx.RawMessage", nil
	}
	if len(p.Enum) > 0 {
		if err := g.emitDef(ctx, p); err != nil {
			return "", err
		}
		return ctx, nil
	}
	t, _ := p.Type.base()
	switch t {
	case "string":
		return "string", nil
	case "boolean":
		return "bool", nil
	case "number":
		return "float64", nil
	case "integer":
		switch p.Format {
		case "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64":
			return p.Format, nil
		case "uint":
			return "uint", nil
		case "int":
			return "int", nil
		}
		return "int64", nil
	case "array":
		if p.Items == nil {
			return "[]jsonx.RawMessage", nil
		}
		it, err := g.goType(ctx+"Item", p.Items)
		if err != nil {
			return "", err
		}
		return "[]" + it, nil
	case "object":
		if len(p.Properties) > 0 {
			if err := g.emitDef(ctx, p); err != nil {
				return "", err
			}
			return ctx, nil
		}
		if len(p.AdditionalProperties) > 0 && string(p.AdditionalProperties) != "true" && string(p.AdditionalProperties) != "false" {
			var ap node
			if err := json.Unmarshal(p.AdditionalProperties, &ap); err != nil {
				return "", err
			}
			vt, err := g.goType(ctx+"Value", &ap)
			if err != nil {
				return "", err
			}
			return "map[string]" + vt, nil
		}
		return "map[string]jsonx.RawMessage", nil
	case "":
		return "jsonx.RawMessage", nil
	}
	return "", fmt.Errorf("unsupported type %q", t)
}

func (g *generator) methods() (string, error) {
	req, ok := g.roots["request"]
	if !ok {
		return "", fmt.Errorf("schema document has no request schema")
	}
	type method struct{ name, params string }
	var ms []method
	for _, v := range req.OneOf {
		m, ok := v.Properties["method"]
		if !ok {
			return "", fmt.Errorf("request variant without method")
		}
		name, ok := m.Const.(string)
		if !ok {
			return "", fmt.Errorf("request variant method is not a const string")
		}
		p, ok := v.Properties["params"]
		if !ok || p.Ref == "" {
			return "", fmt.Errorf("method %s: params is not a $ref", name)
		}
		if _, ok := g.defs[p.Ref]; !ok {
			return "", fmt.Errorf("method %s: unknown params type %s", name, p.Ref)
		}
		ms = append(ms, method{name, p.Ref})
	}
	var w bytes.Buffer
	w.WriteString(g.header())
	fmt.Fprintf(&w, "package %s\n\n", g.opt.Package)
	fmt.Fprintf(&w, "// Protocol is the protocol number of the schema these types were generated\n// from; Herdr's ping reports the same number.\nconst Protocol = %d\n\n", g.doc.Protocol)
	fmt.Fprintf(&w, "// SchemaVersion is the schema document format version.\nconst SchemaVersion = %d\n\n", g.doc.SchemaVersion)
	fmt.Fprintf(&w, "// SchemaSHA256 is the sha256 of the schema document these types were\n// generated from.\nconst SchemaSHA256 = %q\n\n", g.sha)
	w.WriteString("// Wire method names, in schema order.\nconst (\n")
	for _, m := range ms {
		fmt.Fprintf(&w, "\tMethod%s = %q\n", Pascal(m.name), m.name)
	}
	w.WriteString(")\n\n")
	w.WriteString("// Methods lists every method of the schema with the name of its params\n// type, in schema order.\nvar Methods = []MethodInfo{\n")
	for _, m := range ms {
		fmt.Fprintf(&w, "\t{Name: Method%s, Params: %q},\n", Pascal(m.name), m.params)
	}
	w.WriteString("}\n\n")
	w.WriteString("// NewParams returns a pointer to a new zero params value for method, and\n// false when the schema has no such method.\nfunc NewParams(method string) (any, bool) {\n\tswitch method {\n")
	for _, m := range ms {
		fmt.Fprintf(&w, "\tcase Method%s:\n\t\treturn new(%s), true\n", Pascal(m.name), m.params)
	}
	w.WriteString("\t}\n\treturn nil, false\n}\n\n")
	w.WriteString("// RequiredParams returns the params fields method requires, in schema\n// order; nil for a method without required fields or unknown to the schema.\nfunc RequiredParams(method string) []string {\n\tswitch method {\n")
	for _, m := range ms {
		req := g.defs[m.params].Required
		if len(req) == 0 {
			continue
		}
		quoted := make([]string, len(req))
		for i, r := range req {
			quoted[i] = strconv.Quote(r)
		}
		fmt.Fprintf(&w, "\tcase Method%s:\n\t\treturn []string{%s}\n", Pascal(m.name), strings.Join(quoted, ", "))
	}
	w.WriteString("\t}\n\treturn nil\n}\n\n")
	sort.Strings(g.unions)
	w.WriteString("// unionNames lists the tagged unions of this schema.\nvar unionNames = []string{")
	for i, u := range g.unions {
		if i > 0 {
			w.WriteString(", ")
		}
		w.WriteString(strconv.Quote(u))
	}
	w.WriteString("}\n")
	return w.String(), nil
}
