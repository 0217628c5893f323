package hosttest

import (
	"encoding/json"
	"github.com/google/go-cmp/cmp"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/e2e/internal/fakemodel"
)

// req builds a logged script request listing tools (canonical names, host
// prefix mcp__herdr_link__), carrying results of actions, answered by via.
func req(defBytes int, tools []string, results []string, via string) fakemodel.Request {
	q := fakemodel.Request{Main: true, LinkDefBytes: defBytes, Reply: fakemodel.Reply{Kind: "call", Via: via}}
	for _, c := range tools {
		deferred := strings.HasSuffix(c, "?")
		c = strings.TrimSuffix(c, "?")
		q.Tools = append(q.Tools, fakemodel.ToolDef{Name: "mcp__herdr_link__" + c, Canonical: c, Deferred: deferred})
	}
	for _, a := range results {
		q.Results = append(q.Results, fakemodel.Result{Action: a})
	}
	return q
}

func TestMeasure(t *testing.T) {
	gw, all := []string{"herdr_link"}, []string{"herdr_link", "herdr_link_peers", "herdr_link_send", "herdr_link_close"}
	side := fakemodel.Request{Main: false, LinkDefBytes: 99999}
	tests := []struct {
		name string
		reqs []fakemodel.Request
		want SessionMetrics
	}{
		{"at once", []fakemodel.Request{side, req(900, gw, nil, "direct"), req(3600, all, []string{"activate"}, "direct"), req(3600, all, []string{"peers"}, "")},
			SessionMetrics{Activation: 1, NamesBefore: []string{"mcp__herdr_link__herdr_link"}, NamesAfter: names(all), ListChanged: "at once", Honoured: true, Dormant: 900, Active: 3600}},
		{"late", []fakemodel.Request{req(900, gw, nil, "direct"), req(900, gw, []string{"activate"}, "gateway"), req(3600, all, []string{"peers"}, "")},
			SessionMetrics{Activation: 1, NamesBefore: names(gw), NamesAfter: names(all), ListChanged: "1 step late", Honoured: true, Dormant: 900, Active: 3600}},
		{"never", []fakemodel.Request{req(1184, gw, nil, "direct"), req(1184, gw, []string{"activate"}, "gateway"), req(1184, gw, []string{"peers"}, "")},
			SessionMetrics{Activation: 1, NamesBefore: names(gw), NamesAfter: names(gw), ListChanged: "no", Dormant: 1184, Active: 1184}},
		{"via tool search", []fakemodel.Request{req(0, nil, nil, "search"), req(910, gw, nil, "direct"), req(910, gw, []string{"activate"}, "search"), req(3688, all, nil, "direct")},
			SessionMetrics{Activation: 2, NamesBefore: names(gw), BehindSearch: true, NamesAfter: names(all), ListChanged: "via tool search", Honoured: true, Dormant: 910, Active: 3688}},
		{"deferred tools do not count as shown", []fakemodel.Request{req(900, gw, nil, "direct"), req(900, []string{"herdr_link", "herdr_link_peers?"}, []string{"activate"}, "gateway"), req(900, []string{"herdr_link", "herdr_link_peers?"}, nil, "")},
			SessionMetrics{Activation: 1, NamesBefore: names(gw), NamesAfter: []string{"mcp__herdr_link__herdr_link", "mcp__herdr_link__herdr_link_peers (deferred)"}, ListChanged: "no", Dormant: 900, Active: 900}},
		{"ended right after activating", []fakemodel.Request{req(900, gw, nil, "direct"), req(900, gw, []string{"activate"}, "")},
			SessionMetrics{Activation: 1, NamesBefore: names(gw), NamesAfter: names(gw), ListChanged: "n/a", Dormant: 900, Active: 900}},
		{"never activated", []fakemodel.Request{req(900, gw, nil, "")},
			SessionMetrics{Activation: -1, NamesBefore: names(gw), NamesAfter: names(gw), ListChanged: "n/a", Dormant: 900}},
		{"no requests", nil, SessionMetrics{Activation: -1, ListChanged: "n/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := measure(tt.reqs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("measure mismatch (-want +got):\n%s", cmp.Diff(tt.want, got))
			}
		})
	}
}

func names(c []string) []string {
	var out []string
	for _, n := range c {
		out = append(out, "mcp__herdr_link__"+n)
	}
	return out
}

func TestFootprint(t *testing.T) {
	ref := Reference{DormantMax: 1093, ActiveMax: 2539}
	tests := []struct {
		dormant, active int
		ref             Reference
		fails           int
	}{
		{1093, 2539, ref, 0},
		{1094, 2539, ref, 1},
		{923, 3691, ref, 1},
		{2000, 9000, ref, 2},
		{2000, 9000, Reference{}, 0}, // no reference figure for the host: measured only
	}
	for _, tt := range tests {
		r := &Result{Sessions: []SessionResult{
			{Metrics: SessionMetrics{Dormant: tt.dormant - 1, Active: tt.active}},
			{Metrics: SessionMetrics{Dormant: tt.dormant, Active: tt.active - 5}},
		}}
		r.footprint(tt.ref)
		if r.DormantBytes != tt.dormant || r.ActiveBytes != tt.active || len(r.FootprintFailures) != tt.fails {
			t.Errorf("%d/%d: got %d/%d, failures %v, want %d failures", tt.dormant, tt.active, r.DormantBytes, r.ActiveBytes, r.FootprintFailures, tt.fails)
		}
		if (r.Verdict() == "PASS") != (tt.fails == 0) {
			t.Errorf("%d/%d: verdict %s", tt.dormant, tt.active, r.Verdict())
		}
	}
}

func TestReferenceFile(t *testing.T) {
	ref, err := LoadReference("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	if c := ref["claude"]; c.ActiveMax != 2539 || c.DormantMax != 1093 {
		t.Fatalf("claude reference active %d, dormant %d; want active 2539, dormant 1093", c.ActiveMax, c.DormantMax)
	}
	for name := range ref {
		if Lookup(name) == nil {
			t.Errorf("reference for unknown host %q", name)
		}
	}
}

func TestWorldAndDeliveries(t *testing.T) {
	for _, h := range Hosts() {
		var w struct {
			Workspaces []struct {
				ID   string
				Tabs []struct {
					Panes []struct {
						ID    string
						Agent struct{ Kind, Name, Status string }
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(World(h.Kind)), &w); err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		got := map[string]string{}
		for _, ws := range w.Workspaces {
			for _, tab := range ws.Tabs {
				for _, p := range tab.Panes {
					got[p.ID] = ws.ID + "/" + p.Agent.Name
				}
			}
		}
		want := map[string]string{SenderPane: "w1/brain", ReviewerPane: "w1/reviewer", OtherPane: "w2/ops"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: world %v, want %v", h.Name, got, want)
		}
	}
	env := `{"protocol":"herdr-link/1","id":"hl_1","from":"brain","to":"reviewer","message":"m"}`
	pasted := "<pasted_content id=\"1\">wrapper\n" + env + "</pasted_content id=\"1\">"
	got := envelopesIn([]Turn{{Text: pasted}, {Text: "no envelope"}})
	if len(got) != 1 {
		t.Fatalf("envelopesIn found %d envelopes, want 1", len(got))
	}
	if got[0].env.ID != "hl_1" || got[0].text != pasted {
		t.Fatalf("envelopesIn = %s in %q, want hl_1 in %q", got[0].env.ID, got[0].text, pasted)
	}
}

func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, h := range Hosts() {
		if seen[h.Name] {
			t.Errorf("host %s twice", h.Name)
		}
		seen[h.Name] = true
		if !strings.HasSuffix(h.Packages[0], "@"+h.Version) {
			t.Errorf("%s: first package %q is not pinned to %s", h.Name, h.Packages[0], h.Version)
		}
		modes := map[string]bool{}
		for _, m := range h.Modes {
			if m.Name == "" || modes[m.Name] || m.Note == "" {
				t.Errorf("%s: mode %q with note %q, want a unique name and a note", h.Name, m.Name, m.Note)
			}
			modes[m.Name] = true
		}
	}
	for _, want := range []string{"claude", "codex", "opencode"} {
		if !seen[want] {
			t.Errorf("host %s is not registered", want)
		}
	}
}

func TestCommands(t *testing.T) {
	// Each host writes its configuration into the session's HOME and
	// points it at the fake model and at herdr-link, registered with what
	// `herdr-link config HOST` prints. Claude Code's registration runs
	// `claude mcp add`: it is checked only where the host is installed.
	if testing.Short() {
		t.Skip("builds herdr-link")
	}
	link := buildTree(t, "herdr-link")
	cache := os.Getenv("HERDR_LINK_HOSTS")
	for _, h := range Hosts() {
		hostBin := "/x/" + h.Bin
		if h.Name == "claude" {
			if cache == "" || !h.Installed(cache) {
				t.Logf("%s: not installed (HERDR_LINK_HOSTS), its registration is not checked", h.Name)
				continue
			}
			hostBin = h.BinPath(cache)
		}
		for _, m := range h.Modes {
			dir := t.TempDir()
			s := &Session{Host: h, Mode: m, Dir: dir, Home: dir + "/home", Work: dir + "/work", HostBin: hostBin,
				LinkBin: link, ModelURL: "http://127.0.0.1:1", Prompt: "hello \"world\""}
			if err := mkdirs(s.Home, s.Work); err != nil {
				t.Fatal(err)
			}
			cmd, err := h.Command(s)
			if err != nil {
				t.Fatalf("%s/%s: %v", h.Name, m.Name, err)
			}
			if cmd.Path != s.HostBin {
				t.Errorf("%s/%s: runs %s", h.Name, m.Name, cmd.Path)
			}
			for _, a := range m.Args {
				if !contains(cmd.Args, a) {
					t.Errorf("%s/%s: mode arg %q missing from %q", h.Name, m.Name, a, cmd.Args)
				}
			}
			// (Grok CLI reads its project's settings; an interactive
			// session's herdr-link is the MCP tap.)
			cfg := readTree(t, s.Home) + readTree(t, s.Work)
			if !strings.Contains(cfg, link) && (h.Interactive == nil || !strings.Contains(cfg, filepath.Join(s.Dir, "tap", tapName))) {
				t.Errorf("%s/%s: no config under HOME names herdr-link", h.Name, m.Name)
			}
			all := cfg + strings.Join(h.Env(s), "\n")
			if !strings.Contains(all, s.ModelURL) {
				t.Errorf("%s/%s: the model URL is neither in the config nor in the environment", h.Name, m.Name)
			}
		}
	}
}

func mkdirs(dirs ...string) error {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

func readTree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		c, err := os.ReadFile(p)
		b.Write(c)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestInstallFailureIsClear(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm not installed")
	}
	cache := t.TempDir()
	h := &Host{Name: "nohost", Display: "No Host", Version: "0.0.0", Bin: "nohost",
		Packages: []string{"file:" + filepath.Join(cache, "does-not-exist")}}
	err := h.Install(t.Context(), cache)
	if err == nil {
		t.Fatal("install of a missing package succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "No Host 0.0.0 cannot be installed") || !strings.Contains(msg, "does-not-exist") {
		t.Fatalf("unclear error: %v", err)
	}
	if h.Installed(cache) {
		t.Fatal("a failed install counts as installed")
	}
}

func TestCheckSurface(t *testing.T) {
	gw, all := []string{"herdr_link"}, []string{"herdr_link", "herdr_link_peers", "herdr_link_start", "herdr_link_send", "herdr_link_wait", "herdr_link_close"}
	session := func(reqs ...fakemodel.Request) SessionResult {
		for i := range reqs {
			reqs[i].LinkTools = nil
			for _, td := range reqs[i].Tools {
				reqs[i].LinkTools = append(reqs[i].LinkTools, td.Canonical)
			}
		}
		return SessionResult{Requests: reqs, Metrics: measure(reqs)}
	}
	refresh, never := Mode{ListChanged: true}, Mode{}
	tests := []struct {
		name  string
		s     SessionResult
		m     Mode
		fails int
	}{
		{"refreshing host", session(req(1, gw, nil, ""), req(1, all, []string{"activate"}, "")), refresh, 0},
		{"refresh missing a tool", session(req(1, gw, nil, ""), req(1, all[:5], []string{"activate"}, "")), refresh, 1},
		{"dormant list shows more than the gateway", session(req(1, all, nil, ""), req(1, all, []string{"activate"}, "")), refresh, 1},
		{"non-refreshing host", session(req(1, gw, nil, ""), req(1, gw, []string{"activate"}, "gateway")), never, 0},
		{"non-refreshing host that refreshed", session(req(1, gw, nil, ""), req(1, all, []string{"activate"}, "")), never, 1},
		{"behind tool search", session(req(0, nil, nil, "search"), req(1, gw, nil, ""), req(1, []string{"herdr_link", "herdr_link_peers"}, []string{"activate"}, "")), refresh, 0},
	}
	for _, tt := range tests {
		r := &Result{}
		r.checkSurface(tt.s, tt.m)
		if len(r.Failures) != tt.fails {
			t.Errorf("%s: failures %q, want %d", tt.name, r.Failures, tt.fails)
		}
	}
}

func TestHiddenIDs(t *testing.T) {
	s := &SessionResult{Name: "sender", Requests: []fakemodel.Request{{Results: []fakemodel.Result{
		{Action: "peers", Text: `{"peers":[{"name":"reviewer","pane":"w1:p2"}]}`},
		{Action: "", Text: "w1:p2 in a host's own tool result is not herdr-link's"}}}}}
	r := &Result{ResultBytes: map[string]int{}}
	r.checkSession(s, nil)
	if len(r.Failures) != 1 || !strings.Contains(r.Failures[0], `"w1:p2"`) {
		t.Fatalf("failures %q", r.Failures)
	}
}
