package herdrsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/real-0.8.2.jsonl was recorded from real Herdr 0.8.2 (upstream
// commit 1c76079f) with the real Claude Code and Codex as its agents, by
// e2e/realherdr's simulator step: the simulator replays it with no
// structural difference, and the same recording with one answer changed
// fails the verification.
func TestVerifyRealRecording(t *testing.T) {
	const rec = "testdata/real-0.8.2.jsonl"
	out, errOut, code := runCLI(t, "verify", rec)
	if code != 0 || !strings.Contains(out, "no structural difference") {
		t.Fatalf("verify %s: exit %d, want 0\n%s%s", rec, code, out, errOut)
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	// A retained event written before the agent was detected has no agent
	// key: a note, not a difference.
	early := filepath.Join(t.TempDir(), "early.jsonl")
	if err := os.WriteFile(early, []byte(strings.Replace(string(b), `{"data":{"pane":{"agent":"claude",`, `{"data":{"pane":{`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runCLI(t, "verify", early); code != 0 || !strings.Contains(out, "predates the agent's detection") {
		t.Errorf("verify with an event from before detection: exit %d, want 0 and a note\n%s%s", code, out, errOut)
	}
	// A simulator that answers one method differently from real Herdr
	// fails the verification, naming that method.
	for _, fault := range []string{"agent.get:error=agent_not_found:no such agent", "agent.list:garbage"} {
		out, errOut, code := runCLI(t, "verify", "-fault", fault, rec)
		method := fault[:strings.Index(fault, ":")]
		if code != 1 || !strings.Contains(out, "DIFF exchange") || !strings.Contains(out, method) {
			t.Errorf("verify with the simulator fault %s: exit %d, want 1 and a DIFF naming %s\n%s%s", fault, code, method, out, errOut)
		}
	}
	tests := []struct{ name, from, to, want string }{
		{"a key renamed", `"agent_status":"idle","workspace_id"`, `"agent_state":"idle","workspace_id"`, "agent_status"},
		{"a result tag", `"type":"agent_list"`, `"type":"agents"`, "agent.list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(string(b), tt.from) {
				t.Fatalf("the recording has no %s", tt.from)
			}
			p := filepath.Join(t.TempDir(), "drifted.jsonl")
			if err := os.WriteFile(p, []byte(strings.Replace(string(b), tt.from, tt.to, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := runCLI(t, "verify", p)
			if code != 1 || !strings.Contains(out, "DIFF exchange") || !strings.Contains(out, tt.want) {
				t.Errorf("verify with %s: exit %d, want 1 and a DIFF naming %s\n%s%s", tt.name, code, tt.want, out, errOut)
			}
		})
	}
}
