package herdrlink

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// manifest is herdr-plugin.toml as the test reads it: top-level keys and
// arrays of tables, with string, integer and string-array values.
type manifest struct {
	top    map[string]any
	tables map[string][]map[string]any
}

// parseManifest reads the TOML subset the manifest uses (key = "string",
// key = 12, key = ["a", "b"], [[table]], comments); anything else fails the test, so
// the manifest stays within what this check understands.
func parseManifest(t *testing.T, path string) manifest {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := manifest{top: map[string]any{}, tables: map[string][]map[string]any{}}
	cur := m.top
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "[[") && strings.HasSuffix(line, "]]"):
			name := line[2 : len(line)-2]
			cur = map[string]any{}
			m.tables[name] = append(m.tables[name], cur)
			continue
		}
		k, v, ok := strings.Cut(line, " = ")
		if !ok {
			t.Fatalf("line %d: %q is not key = value", n, line)
		}
		if _, dup := cur[k]; dup {
			t.Fatalf("line %d: %s twice", n, k)
		}
		cur[k] = parseValue(t, n, v)
	}
	return m
}

func parseValue(t *testing.T, n int, v string) any {
	t.Helper()
	if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
		var out []string
		for _, part := range strings.Split(v[1:len(v)-1], ",") {
			s, err := strconv.Unquote(strings.TrimSpace(part))
			if err != nil {
				t.Fatalf("line %d: %q is not a string", n, part)
			}
			out = append(out, s)
		}
		return out
	}
	if i, err := strconv.Atoi(v); err == nil {
		return i
	}
	s, err := strconv.Unquote(v)
	if err != nil {
		t.Fatalf("line %d: %q is not a string or an integer", n, v)
	}
	return s
}

// hookEvents are the event names an [[events]] hook may name: Herdr's
// plugin hook events (upstream src/api/schema/events.rs,
// PLUGIN_HOOK_EVENT_KINDS; high-volume events such as pane.output_changed
// and layout.updated are not among them). Another name links with a
// warning and never runs.
var hookEvents = []string{
	"workspace.created", "workspace.updated", "workspace.closed", "workspace.renamed", "workspace.moved",
	"workspace.reordered", "workspace.focused", "worktree.created", "worktree.opened", "worktree.removed",
	"tab.created", "tab.closed", "tab.renamed", "tab.moved", "tab.focused",
	"pane.created", "pane.closed", "pane.focused", "pane.moved", "pane.exited",
	"pane.agent_detected", "pane.agent_status_changed",
}

// The keys each table may hold (upstream src/app/api/plugins/manifest.rs;
// an unknown key is ignored by Herdr, so here it is a typo).
var tableKeys = map[string][]string{
	"build":         {"command", "platforms"},
	"startup":       {"command", "platforms"},
	"actions":       {"id", "title", "description", "contexts", "platforms", "command"},
	"events":        {"on", "platforms", "command"},
	"panes":         {"id", "title", "description", "platforms", "placement", "width", "height", "command"},
	"link_handlers": {"id", "title", "pattern", "action", "platforms"},
}

// checkPopupSize checks a [[panes]] width or height as Herdr reads it: a
// cell count 0…65535, or a percentage string "1%"…"100%".
func checkPopupSize(t *testing.T, where string, v any) {
	t.Helper()
	switch v := v.(type) {
	case int:
		if v < 0 || v > 65535 {
			t.Errorf("%s: %d cells, want 0…65535", where, v)
		}
	case string:
		p, ok := strings.CutSuffix(v, "%")
		n, err := strconv.Atoi(p)
		if !ok || err != nil || n < 1 || n > 100 {
			t.Errorf("%s: %q, want a cell count or a percentage 1%%…100%%", where, v)
		}
	default:
		t.Errorf("%s: %v is neither a cell count nor a percentage", where, v)
	}
}

// TestPluginManifest checks herdr-plugin.toml against the rules of Herdr's
// plugin documentation and manifest validation: the required keys, the id
// characters (plugin ids: letters, digits, '.', ':', '_', '-'; local ids
// the same without '.'), unique action ids, titles, argv commands that
// start no shell, known platforms and contexts, hook event names, pane
// placements and popup sizes; and against herdr-link: the build makes the
// binaries the actions, hooks and panes run, and they run real commands.
func TestPluginManifest(t *testing.T) {
	m := parseManifest(t, filepath.Join("..", "..", "..", "herdr-plugin.toml"))
	known := map[string]bool{"id": true, "name": true, "version": true, "min_herdr_version": true, "description": true, "platforms": true}
	for k := range m.top {
		if !known[k] {
			t.Errorf("unknown top-level key %q", k)
		}
	}
	for _, k := range []string{"id", "name", "version", "min_herdr_version"} {
		if s, _ := m.top[k].(string); strings.TrimSpace(s) == "" {
			t.Errorf("required key %s is missing or empty", k)
		}
	}
	// Herdr keys the managed checkout on the id: the reference
	// implementation's plugin is "herdr-link", and installing one must
	// not replace the other.
	if id, _ := m.top["id"].(string); !regexp.MustCompile(`^[A-Za-z0-9.:_-]+$`).MatchString(id) || len(id) > 120 || id == "herdr-link" || !strings.Contains(id, ".") {
		t.Errorf("plugin id %q: want an owner-qualified Herdr id (owner.name; letters, digits, '.', ':', '_', '-'; at most 120), not herdr-link", id)
	}
	if v, _ := m.top["min_herdr_version"].(string); !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) {
		t.Errorf("min_herdr_version %q is not a version", v)
	}
	checkPlatforms(t, "top level", m.top["platforms"], true)
	for name, tables := range m.tables {
		keys, ok := tableKeys[name]
		if !ok {
			t.Errorf("unknown table [[%s]]", name)
		}
		for _, tb := range tables {
			for k := range tb {
				if !slices.Contains(keys, k) {
					t.Errorf("[[%s]]: unknown key %q", name, k)
				}
			}
		}
	}
	built := checkBuilds(t, m)
	checkEntrypoints(t, m, built)
	checkPanes(t, m, built)
}

// checkBuilds checks the [[build]] commands and returns each binary they
// make (./bin/x) with its package.
func checkBuilds(t *testing.T, m manifest) map[string]string {
	t.Helper()
	built := map[string]string{}
	for i, b := range m.tables["build"] {
		cmd := checkCommand(t, "build "+strconv.Itoa(i), b)
		checkPlatforms(t, "build", b["platforms"], false)
		if len(cmd) > 0 && cmd[0] == "go" {
			if o := slices.Index(cmd, "-o"); o >= 0 && o+1 < len(cmd) {
				built["./"+cmd[o+1]] = cmd[len(cmd)-1]
			}
			if _, err := os.Stat(filepath.Join("..", "..", "..", cmd[len(cmd)-1])); err != nil {
				t.Errorf("build of %s: %v", cmd[len(cmd)-1], err)
			}
		}
	}
	return built
}

// checkEntrypoints checks the actions, the startup hooks and the event
// hooks: each runs a herdr-link command the build makes; the status hook
// and the startup hook run herdr-link deliver.
func checkEntrypoints(t *testing.T, m manifest, built map[string]string) {
	t.Helper()
	// runsLink checks that cmd runs a herdr-link command the build makes.
	runsLink := func(where string, cmd []string) {
		t.Helper()
		if len(cmd) < 2 || built[cmd[0]] != "./cmd/herdr-link" {
			t.Errorf("%s runs %q, not the herdr-link the build makes (%v)", where, cmd, built)
		} else if _, ok := commands[cmd[1]]; !ok {
			t.Errorf("%s runs herdr-link %s, which is no command", where, cmd[1])
		}
	}
	ids := map[string]bool{}
	for _, a := range m.tables["actions"] {
		id, _ := a["id"].(string)
		if !regexp.MustCompile(`^[A-Za-z0-9:_-]+$`).MatchString(id) || ids[id] {
			t.Errorf("action id %q (bad characters or not unique)", id)
		}
		ids[id] = true
		if s, _ := a["title"].(string); strings.TrimSpace(s) == "" {
			t.Errorf("action %s has no title", id)
		}
		for _, c := range asStrings(a["contexts"]) {
			if !slices.Contains([]string{"global", "workspace", "tab", "pane", "selection"}, c) {
				t.Errorf("action %s: unknown context %q", id, c)
			}
		}
		checkPlatforms(t, "action "+id, a["platforms"], false)
		runsLink("action "+id, checkCommand(t, "action "+id, a))
	}
	for _, want := range []string{"probe", "setup"} {
		if !ids[want] {
			t.Errorf("no %s action", want)
		}
	}
	for i, s := range m.tables["startup"] {
		where := "startup " + strconv.Itoa(i)
		checkPlatforms(t, where, s["platforms"], false)
		runsLink(where, checkCommand(t, where, s))
	}
	if cmds := m.tables["startup"]; len(cmds) != 1 || !slices.Equal(asStrings(cmds[0]["command"]), []string{"./bin/herdr-link", "deliver"}) {
		t.Errorf("startup hooks %v, want one: herdr-link deliver", cmds)
	}
	statusHooks := 0
	for i, e := range m.tables["events"] {
		on, _ := e["on"].(string)
		where := "event hook " + strconv.Itoa(i) + " (" + on + ")"
		if !slices.Contains(hookEvents, on) {
			t.Errorf("%s: %q is not an event Herdr runs hooks on (%v)", where, on, hookEvents)
		}
		checkPlatforms(t, where, e["platforms"], false)
		cmd := checkCommand(t, where, e)
		runsLink(where, cmd)
		if on == "pane.agent_status_changed" && slices.Equal(cmd, []string{"./bin/herdr-link", "deliver"}) {
			statusHooks++
		}
	}
	if statusHooks != 1 {
		t.Errorf("%d pane.agent_status_changed hooks run herdr-link deliver, want 1", statusHooks)
	}
}

// checkPanes checks the [[panes]] entries as Herdr's manifest validation
// does: local ids, titles, a known placement, a width and height only for
// a popup (a cell count or a percentage), and a command the build makes.
func checkPanes(t *testing.T, m manifest, built map[string]string) {
	t.Helper()
	panes := map[string]bool{}
	for _, p := range m.tables["panes"] {
		id, _ := p["id"].(string)
		where := "pane " + id
		if !regexp.MustCompile(`^[A-Za-z0-9:_-]+$`).MatchString(id) || len(id) > 120 || panes[id] {
			t.Errorf("pane id %q (bad characters, too long or not unique)", id)
		}
		panes[id] = true
		if s, _ := p["title"].(string); strings.TrimSpace(s) == "" {
			t.Errorf("%s has no title", where)
		}
		placement, ok := p["placement"].(string)
		if !ok {
			placement = "overlay" // Herdr's default
		}
		if !slices.Contains([]string{"overlay", "popup", "split", "tab", "zoomed"}, placement) {
			t.Errorf("%s: unknown placement %q", where, placement)
		}
		for _, k := range []string{"width", "height"} {
			v, set := p[k]
			switch {
			case !set:
			case placement != "popup":
				t.Errorf("%s: %s is only allowed with placement popup (Herdr refuses the manifest)", where, k)
			default:
				checkPopupSize(t, where+" "+k, v)
			}
		}
		checkPlatforms(t, where, p["platforms"], false)
		if cmd := checkCommand(t, where, p); len(cmd) == 0 || built[cmd[0]] == "" {
			t.Errorf("%s runs %q, which the build does not make (%v)", where, cmd, built)
		}
	}
	if !panes["board"] {
		t.Errorf("no board pane")
	}
}

func asStrings(v any) []string { s, _ := v.([]string); return s }

func checkCommand(t *testing.T, where string, table map[string]any) []string {
	t.Helper()
	cmd, ok := table["command"].([]string)
	if !ok || len(cmd) == 0 || cmd[0] == "" {
		t.Errorf("%s: command must be a non-empty argv array", where)
		return nil
	}
	if base := filepath.Base(cmd[0]); slices.Contains([]string{"sh", "bash", "zsh", "dash", "fish", "cmd", "powershell", "pwsh", "env"}, base) || slices.Contains(cmd, "-c") {
		t.Errorf("%s: %q starts a shell", where, cmd)
	}
	return cmd
}

func checkPlatforms(t *testing.T, where string, v any, required bool) {
	t.Helper()
	if v == nil {
		if required {
			t.Errorf("%s: no platforms (Herdr links it with a warning)", where)
		}
		return
	}
	ps, ok := v.([]string)
	if !ok || len(ps) == 0 {
		t.Errorf("%s: platforms must be a non-empty array", where)
	}
	for _, p := range ps {
		if !slices.Contains([]string{"linux", "macos", "windows"}, p) {
			t.Errorf("%s: unknown platform %q", where, p)
		}
	}
}
