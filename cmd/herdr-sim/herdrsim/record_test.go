package herdrsim

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/recording"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// setPane points the commands at srv, as from the pane pane.
func setPane(t *testing.T, srv *sockettest.Server, pane string) {
	t.Setenv("HERDR_ENV", "1")
	t.Setenv("HERDR_SOCKET_PATH", srv.Path())
	t.Setenv("HERDR_PANE_ID", pane)
	t.Setenv("HERDR_SESSION", "")
}

// runRecord runs herdr-sim record, listening to events for d.
func runRecord(t *testing.T, d time.Duration, args ...string) (string, string, int) {
	t.Helper()
	return runCLI(t, append([]string{"record", "--events", d.String()}, args...)...)
}

// verifyRecording runs herdr-sim's verify on file (in this process).
func verifyRecording(t *testing.T, file string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code := Run([]string{"verify", file}, &out, &out)
	return out.String(), code
}

// herdr-sim record against the simulator, then herdr-sim verify, reports
// no difference; editing one recorded key makes it report exactly that
// difference.
func TestRecordThenVerify(t *testing.T) {
	srv := simtest.New(t, nil, func(s *sockettest.Server) { s.Tick = 10 * time.Millisecond })
	setPane(t, srv, "w1:p1")
	// Events during the recording's subscription.
	go func() {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if m := srv.Methods(); len(m) > 0 && m[len(m)-1] == "events.subscribe" {
				break
			}
		}
		time.Sleep(50 * time.Millisecond) // the subscription has probed its pane
		_ = srv.World.SetTitle("w1:p2", "codex: reviewing")
		_ = srv.World.SetStatus("w1:p1", "idle")
	}()
	file := filepath.Join(t.TempDir(), "rec.txt")
	out, errOut, code := runRecord(t, 600*time.Millisecond, file)
	if code != 0 || !strings.Contains(out, "recorded 10 exchanges") {
		t.Fatalf("herdr-sim record: exit %d\n%s%s", code, out, errOut)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rec := string(data)
	for _, secret := range []string{"brain", "reviewer", "writer", `"label":"app"`, `"label":"infra"`, "/home/dev", "Refactor", "7d0c2a4e", "ses_3f9a", "term_63a1", "codex: reviewing"} {
		if strings.Contains(rec, secret) {
			t.Errorf("the recording holds %q", secret)
		}
	}
	for _, want := range []string{`"event":"pane_updated"`, `"event":"pane.agent_status_changed"`, `"type":"subscription_started"`, `"code":"agent_not_found"`, `"code":"pane_not_found"`, `"code":"invalid_request"`} {
		if !strings.Contains(rec, want) {
			t.Errorf("the recording lacks %s", want)
		}
	}
	if got, code := verifyRecording(t, file); code != 0 || !strings.Contains(got, "no structural difference: 10 exchanges") {
		t.Fatalf("verify: exit %d\n%s", code, got)
	}
	edits := []struct {
		name     string
		line     string // a prefix of the recorded line to edit
		from, to string
		wantDiff string
	}{
		{"key removed", `< {"id":"probe:pane.get","result"`, `"focused":true,`, ``, "DIFF exchange 5 (pane.get): /result/pane/focused: extra key"},
		{"type changed", `< {"id":"probe:agent.get","result"`, `"revision":(\d+)`, `"revision":"$1"`, "DIFF exchange 3 (agent.get): /result/agent/revision: type: want string, got number"},
		{"code changed", `< {"id":"probe:pane.get:missing"`, `"code":"pane_not_found"`, `"code":"pane_gone"`, `DIFF exchange 6 (pane.get): /error/code: value: want "pane_gone", got "pane_not_found"`},
	}
	for _, ed := range edits {
		t.Run(ed.name, func(t *testing.T) {
			lines := strings.Split(rec, "\n")
			edited := 0
			for i, l := range lines {
				re := regexp.MustCompile(ed.from)
				if strings.HasPrefix(l, ed.line) && re.MatchString(l) {
					lines[i] = re.ReplaceAllString(l, ed.to)
					edited++
				}
			}
			if edited != 1 {
				t.Fatalf("edited %d lines", edited)
			}
			f := filepath.Join(t.TempDir(), "edited.txt")
			if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
				t.Fatal(err)
			}
			got, code := verifyRecording(t, f)
			diffs := regexp.MustCompile(`(?m)^DIFF .*$`).FindAllString(got, -1)
			if code != 1 || len(diffs) != 1 || !strings.HasPrefix(diffs[0], ed.wantDiff) {
				t.Fatalf("verify: exit %d, want exactly %q\n%s", code, ed.wantDiff, got)
			}
		})
	}
}

// A recording of a Herdr 0.9 names its version, and herdr-sim verify
// replays it against the 0.9 model. There is no recording of a real 0.9
// (only 0.8.2 ones exist); this synthetic one is made by herdr-sim record
// against the simulator as 0.9.1, at test time.
func TestRecordThenVerify09(t *testing.T) {
	srv := simtest.New(t, nil, func(s *sockettest.Server) {
		s.Tick = 10 * time.Millisecond
		if err := s.UseHerdr(sockettest.NewestHerdr); err != nil {
			t.Fatal(err)
		}
	})
	setPane(t, srv, "w1:p1")
	// A retained pane_closed: a 0.9 subscription must not replay it.
	if err := srv.World.Close("w2:p2"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "rec09.txt")
	out, errOut, code := runRecord(t, 300*time.Millisecond, file)
	if code != 0 {
		t.Fatalf("herdr-sim record: exit %d\n%s%s", code, out, errOut)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rec := string(data)
	if !strings.Contains(rec, "Herdr "+sockettest.NewestHerdr+", protocol 22") {
		t.Errorf("the recording does not name its Herdr:\n%s", rec)
	}
	if strings.Contains(rec, `"event":"pane_closed"`) {
		t.Errorf("the 0.9 subscription replayed history:\n%s", rec)
	}
	if got, code := verifyRecording(t, file); code != 0 || !strings.Contains(got, "no structural difference") {
		t.Fatalf("verify: exit %d\n%s", code, got)
	}
}

func shortRecording(t *testing.T) {
	srv := simtest.New(t, nil)
	setPane(t, srv, "w1:p1")
}

// herdr-sim record FILE never writes through a symbolic link at FILE: a
// link another user planted to a victim file leaves the victim as it was,
// and the probe refuses, saying why.
func TestRecordRefusesSymlink(t *testing.T) {
	shortRecording(t)
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "rec.txt")
	if err := os.Symlink(victim, file); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runRecord(t, 50*time.Millisecond, file)
	if code == 0 || !strings.Contains(errOut, "symbolic link") {
		t.Errorf("herdr-sim record through a link: exit %d\n%s%s", code, out, errOut)
	}
	got, err := os.ReadFile(victim)
	if err != nil || string(got) != "precious\n" {
		t.Fatalf("the victim now holds %q (%v)", got, err)
	}
	if fi, _ := os.Stat(victim); fi.Mode().Perm() != 0o644 {
		t.Fatalf("the victim's mode is now %v", fi.Mode())
	}
	if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	assertNoTemp(t, dir, 2)
}

// An existing regular file at FILE is replaced by a new recording of mode
// 0600 (a recording is private whatever the old file's mode); a hard link
// to the old file keeps the old content.
func TestRecordReplacesWithPrivateFile(t *testing.T) {
	shortRecording(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "rec.txt")
	if err := os.WriteFile(file, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "hardlink")
	if err := os.Link(file, other); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runRecord(t, 50*time.Millisecond, file)
	if code != 0 {
		t.Fatalf("herdr-sim record: exit %d\n%s%s", code, out, errOut)
	}
	fi, err := os.Lstat(file)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("recording: %v %v, want a regular file of mode 0600", fi.Mode(), err)
	}
	data, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(data), recording.Header+"\n") {
		t.Fatalf("recording starts %q", truncateTest(data))
	}
	if got, _ := os.ReadFile(other); string(got) != "old\n" {
		t.Fatalf("the hard link now holds %q", truncateTest(got))
	}
	assertNoTemp(t, dir, 2)
}

// A new recording is 0600 whatever the umask lets through.
func TestRecordNewFileMode(t *testing.T) {
	shortRecording(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "rec.txt")
	if _, errOut, code := runRecord(t, 50*time.Millisecond, file); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if fi, err := os.Lstat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("recording: %v %v", fi, err)
	}
	// A directory at FILE is refused, and left alone.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runRecord(t, 50*time.Millisecond, sub); code == 0 || !strings.Contains(errOut, "not a regular file") {
		t.Fatalf("a directory: exit %d: %s", code, errOut)
	}
	assertNoTemp(t, dir, 2)
}

// record without a FILE, or with an empty one, is a usage error.
func TestRecordWithoutFileIsUsageError(t *testing.T) {
	shortRecording(t)
	for _, args := range [][]string{{}, {""}, {"a", "b"}} {
		out, errOut, code := runRecord(t, 50*time.Millisecond, args...)
		if code != 2 || !strings.Contains(errOut, "usage: herdr-sim record") || out != "" {
			t.Errorf("%q: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

func assertNoTemp(t *testing.T, dir string, want int) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	if len(ents) != want {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("the directory holds %q, want %d entries (a temporary file left behind?)", names, want)
	}
}

func truncateTest(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}

func sharedSchema(t *testing.T) string {
	t.Helper()
	const path = "../../../../shared/herdr-api/herdr-api.schema.protocol-20.json"
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("../shared is missing in CI: %v", err)
		}
		t.Skipf("skipping: %v (../shared is not beside the repository; CI=1 makes this a failure)", err)
	}
	return path
}

// validate checks every answer of the recording's calls against the
// schema document: the simulator's answers match Herdr 0.8.2's document,
// and a document from an imaginary Herdr whose AgentInfo requires a field
// the server does not send is reported at that field.
func TestValidate(t *testing.T) {
	schemaPath := sharedSchema(t)
	srv := simtest.New(t, nil)
	setPane(t, srv, "w1:p1")
	out, errOut, code := runCLI(t, "validate", "--events", "50ms", schemaPath)
	if code != 0 || !strings.Contains(out, "every response of 10 exchanges matches the schema document") {
		t.Fatalf("validate: exit %d\n%s%s", code, out, errOut)
	}
	doc, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(doc, &m)
	ai := m["schemas"].(map[string]any)["success_response"].(map[string]any)["$defs"].(map[string]any)["AgentInfo"].(map[string]any)
	ai["required"] = append(ai["required"].([]any), "nickname")
	future := filepath.Join(t.TempDir(), "future.json")
	b, _ := json.Marshal(m)
	if err := os.WriteFile(future, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCLI(t, "validate", "--events", "50ms", future)
	if code != 1 || !strings.Contains(out, "FAIL exchange 3 (agent.get)") || !strings.Contains(out, "nickname") || !strings.Contains(out, "/result/agent") {
		t.Fatalf("validate against a future document: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, "validate", filepath.Join(t.TempDir(), "missing.json")); code != 2 || errOut == "" {
		t.Fatalf("a missing document: exit %d: %s", code, errOut)
	}
}
