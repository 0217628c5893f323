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
// arrays of tables, with string and string-array values.
type manifest struct {
	top    map[string]any
	tables map[string][]map[string]any
}

// parseManifest reads the TOML subset the manifest uses (key = "string",
// key = ["a", "b"], [[table]], comments); anything else fails the test, so
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
	s, err := strconv.Unquote(v)
	if err != nil {
		t.Fatalf("line %d: %q is not a string", n, v)
	}
	return s
}

// TestPluginManifest checks herdr-plugin.toml against the rules of Herdr's
// plugin documentation and manifest validation: the required keys, the id
// characters (plugin ids: letters, digits, '.', ':', '_', '-'; local ids
// the same without '.'), unique action ids, titles, argv commands that
// start no shell, known platforms and contexts; and against herdr-link:
// the build makes the binary the actions run, and they run real commands.
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
	if id, _ := m.top["id"].(string); !regexp.MustCompile(`^[A-Za-z0-9.:_-]+$`).MatchString(id) {
		t.Errorf("plugin id %q", id)
	}
	if v, _ := m.top["min_herdr_version"].(string); !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) {
		t.Errorf("min_herdr_version %q is not a version", v)
	}
	checkPlatforms(t, "top level", m.top["platforms"], true)
	for name := range m.tables {
		if !slices.Contains([]string{"build", "actions", "startup", "events", "panes", "link_handlers"}, name) {
			t.Errorf("unknown table [[%s]]", name)
		}
	}
	built := ""
	for i, b := range m.tables["build"] {
		cmd := checkCommand(t, "build "+strconv.Itoa(i), b)
		checkPlatforms(t, "build", b["platforms"], false)
		if len(cmd) > 0 && cmd[0] == "go" {
			if o := slices.Index(cmd, "-o"); o >= 0 && o+1 < len(cmd) {
				built = "./" + cmd[o+1]
			}
			if _, err := os.Stat(filepath.Join("..", "..", "..", cmd[len(cmd)-1])); err != nil {
				t.Errorf("build of %s: %v", cmd[len(cmd)-1], err)
			}
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
		cmd := checkCommand(t, "action "+id, a)
		if len(cmd) < 2 || cmd[0] != built {
			t.Errorf("action %s runs %q, not the binary the build makes (%s)", id, cmd, built)
		} else if _, ok := commands[cmd[1]]; !ok {
			t.Errorf("action %s runs herdr-link %s, which is no command", id, cmd[1])
		}
	}
	for _, want := range []string{"doctor", "setup"} {
		if !ids[want] {
			t.Errorf("no %s action", want)
		}
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
