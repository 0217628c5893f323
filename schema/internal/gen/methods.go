package gen

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

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
