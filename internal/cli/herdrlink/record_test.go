package herdrlink

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/cli/herdrsim"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// verifyRecording runs herdr-sim's verify on file (in this process).
func verifyRecording(t *testing.T, file string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code := herdrsim.Run([]string{"verify", file}, &out, &out)
	return out.String(), code
}

// probe --record against the simulator, then
// herdr-sim verify, reports no difference; editing one recorded key makes
// it report exactly that difference.
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
	var outb, errb bytes.Buffer
	code := probeConfig{recordEvents: 600 * time.Millisecond}.run([]string{"--record", file}, &outb, &errb)
	out, errOut := outb.String(), errb.String()
	if code != 0 || !strings.Contains(out, "recorded 10 exchanges") {
		t.Fatalf("probe --record: exit %d\n%s%s", code, out, errOut)
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
