package gen

import (
	"fmt"
)

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
