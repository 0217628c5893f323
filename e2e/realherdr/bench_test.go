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

// benchArgs are the bench row's settings: peers and a confirmed send
// through herdr-link's socket route and over MCP, few enough that real
// TUI turns keep it short.
var benchArgs = []string{"-op", "peers,send-confirm", "-route", "socket,mcp", "-n", "10", "-warmup", "2", "-spawns", "1"}

// bench: herdr-bench's peers and confirmed send through the real Herdr
// (alice's pane, Codex renamed bench-peer as the target) and through its
// embedded simulator, in one run; both tables are logged (BENCHMARKS.md's
// real-Herdr row comes from here). The Codex takes the name bench-peer,
// so this is the last step.
func (l *lane) bench(t *testing.T) {
	name := "bench-peer"
	if _, err := l.h.Client.AgentRename(t.Context(), l.codex, &name); err != nil {
		t.Fatal(err)
	}
	bench := filepath.Join(filepath.Dir(binary), "herdr-bench")
	run := func(what string, env []string, args ...string) string {
		cmd := exec.CommandContext(t.Context(), bench, append(append([]string(nil), benchArgs...), args...)...)
		cmd.Env = append(cleanHerdrEnv(os.Environ()), env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("herdr-bench %s: %v\n%s", what, err, out.String())
		}
		return out.String()
	}
	real := run("against real Herdr", l.h.Env(l.claude), "-yes")
	sim := run("against the simulator", nil, "-sim")
	for _, out := range []string{real, sim} {
		if !strings.Contains(out, "send-confirm socket") || !strings.Contains(out, "peers        socket") {
			t.Fatalf("herdr-bench output without the rows:\n%s", out)
		}
	}
	t.Logf("herdr-bench against real Herdr 0.8.2 (Codex as bench-peer):\n%s\nthe same against the simulator:\n%s", real, sim)
}

// cleanHerdrEnv drops Herdr's variables of the test's own environment.
func cleanHerdrEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HERDR_") || strings.HasPrefix(kv, "HERDR_LINK_") {
			out = append(out, kv)
		}
	}
	return out
}
