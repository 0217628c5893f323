package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

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
	// snapshot recorded from a live Herdr 0.8.2 shows their order).
	"AgentSessionInfo":   {"source", "agent", "kind", "value"},
	"PaneScrollInfo":     {"offset_from_bottom", "max_offset_from_bottom", "viewport_rows"},
	"PaneLayoutSnapshot": {"workspace_id", "tab_id", "zoomed", "area", "focused_pane_id", "panes", "splits"},
	"PaneLayoutPane":     {"pane_id", "focused", "rect"},
	"PaneLayoutRect":     {"x", "y", "width", "height"},
	"PaneLayoutSplit":    {"id", "direction", "ratio", "rect"},
	// WorkspaceInfo.worktree (upstream src/api/schema/workspaces.rs).
	"WorkspaceWorktreeInfo": {"repo_key", "repo_name", "repo_root", "checkout_path", "is_linked_worktree"},
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

// Long: one switch over the JSON Schema shapes the generator maps to Go
// types.
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
