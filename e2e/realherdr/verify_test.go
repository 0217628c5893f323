//go:build unix

package realherdr

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// EnvRecord names a file the simulator step copies its recording of real
// Herdr to (how cmd/herdr-sim/herdrsim/testdata's real recording is made).
const EnvRecord = "HERDR_LINK_REAL_RECORD"

// simulator: `herdr-sim record` in alice's pane records real
// Herdr's answers about the lane's workspace (real Claude Code and Codex
// agents in it), and `herdr-sim verify` replays each request against a
// simulator built from that recording: no structural difference. The same
// recording with one answer changed (a key renamed, as a simulator that
// drifted would answer) fails the verification, naming the exchange.
func (l *lane) simulator(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "real.jsonl")
	record := exec.CommandContext(t.Context(), filepath.Join(filepath.Dir(binary), "herdr-sim"), "record", rec)
	record.Env = append(os.Environ(), l.h.Env(l.claude)...)
	if out, err := record.CombinedOutput(); err != nil {
		t.Fatalf("herdr-sim record: %v\n%s", err, out)
	}
	if dst := os.Getenv(EnvRecord); dst != "" {
		b, err := os.ReadFile(rec)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, code := simVerify(t, rec)
	t.Logf("herdr-sim verify against real Herdr: %s", strings.TrimSpace(out))
	if code != 0 {
		t.Fatalf("herdr-sim verify: exit %d, want 0 (every difference fixed in the simulator or documented)\n%s", code, out)
	}

	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	const key = `"agent_status":`
	i := bytes.Index(b, []byte("\n< "))
	if i < 0 || !bytes.Contains(b[i:], []byte(key)) {
		t.Fatalf("the recording has no answer with %s", key)
	}
	j := i + bytes.Index(b[i:], []byte(key))
	drift := append(append(append([]byte(nil), b[:j]...), `"agent_state":`...), b[j+len(key):]...)
	bad := filepath.Join(t.TempDir(), "drifted.jsonl")
	if err := os.WriteFile(bad, drift, 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = simVerify(t, bad)
	if code != 1 || !strings.Contains(out, "DIFF exchange") || !strings.Contains(out, "agent_status") {
		t.Fatalf("verify of a recording one answer of which differs: exit %d, want 1 with a DIFF naming agent_status\n%s", code, out)
	}
	// And the other way round: the live recording against a simulator
	// that answers one method differently (an error where real Herdr
	// answered) fails, naming that method.
	out, code = simVerify(t, rec, "-fault", "agent.list:error=internal:drifted")
	if code != 1 || !strings.Contains(out, "DIFF exchange") || !strings.Contains(out, "agent.list") {
		t.Fatalf("verify against a simulator whose agent.list differs: exit %d, want 1 with a DIFF naming agent.list\n%s", code, out)
	}
}

func simVerify(t *testing.T, rec string, flags ...string) (string, int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), filepath.Join(filepath.Dir(binary), "herdr-sim"), append(append([]string{"verify"}, flags...), rec)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}
