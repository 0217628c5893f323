package herdrlink

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A record that cannot be read does not stop the listing: it is set
// aside, listed as damaged (exit 0, the reason on stderr), no longer
// held, and 'cancel' removes it; 'cancel --all' too.
func TestOutboxDamaged(t *testing.T) {
	for _, all := range []bool{false, true} {
		t.Run(map[bool]string{false: "by id", true: "all"}[all], func(t *testing.T) {
			f := newOutboxFixture(t, "")
			f.add(t, f.st, "hl_good", "brain", "coder", "fine", time.Minute, time.Hour)
			f.add(t, f.st, "hl_bad", "brain", "coder", "spoiled", time.Minute, time.Hour)
			// Half its JSON.
			var path string
			ents, _ := os.ReadDir(f.st.Dir)
			for _, de := range ents {
				if strings.Contains(de.Name(), ".hl_bad.") {
					path = filepath.Join(f.st.Dir, de.Name())
				}
			}
			if err := os.WriteFile(path, []byte(`{"id":"hl_bad","te`), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := f.run()
			if code != 0 || !strings.Contains(errOut, "damaged record") {
				t.Fatalf("exit %d, stderr %q, want 0 and the damage named", code, errOut)
			}
			if !strings.Contains(out, "hl_good") || !regexpMatch(`hl_bad\s+\? → \?\s+damaged`, out) {
				t.Fatalf("listing lacks the good message or the damaged one:\n%s", out)
			}
			if held, _, _ := f.st.CountsForSender(f.st.KeyHash("term_brain")); held[f.st.KeyHash("term_coder")] != 1 {
				t.Errorf("held = %v, want the good message only", held)
			}
			args := []string{"cancel", "hl_bad"}
			if all {
				args = []string{"cancel", "--all"}
			}
			code, out, errOut = f.run(args...)
			if code != 0 || !strings.Contains(out, "removed hl_bad (damaged)") {
				t.Fatalf("cancel: exit %d, %q, %q", code, out, errOut)
			}
			if ds, _ := f.st.Damaged(); len(ds) != 0 {
				t.Errorf("%d records still damaged (first %s), want none", len(ds), ds[0].ID)
			}
			if _, out, _ = f.run(); strings.Contains(out, "hl_bad") {
				t.Errorf("listed after removal:\n%s", out)
			}
		})
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }
