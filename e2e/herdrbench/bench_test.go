package herdrbench

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

func TestBenchCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	args := []string{"--sim", "-n", "6", "--warmup", "1", "--spawns", "2", "--agents", "12"}
	t.Run("table", func(t *testing.T) {
		out, err := exec.Command(bench, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, want := range []string{"peers        socket", "peers        cli", "peers        mcp", "send         socket", "send         cli", "send         mcp",
			"send-confirm socket", "send-confirm mcp", "delivery: send = -delivery fast", "peers        floor", "send         floor", "p50×floor", "floors:", "start → initialize"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("table lacks %q:\n%s", want, out)
			}
		}
		// The CLI route really spawns processes and pings each time: 4
		// connections and 2 processes per peers lookup.
		if !regexp.MustCompile(`peers +cli .* 4\.00 +2 `).Match(out) || strings.Contains(string(out), "send-confirm cli") {
			t.Errorf("cli route cost:\n%s", out)
		}
	})
	t.Run("gobench", func(t *testing.T) {
		out, err := exec.Command(bench, append(args, "--format", "gobench", "--route", "socket,mcp,floor")...).Output()
		if err != nil {
			t.Fatal(err)
		}
		line := regexp.MustCompile(`^Benchmark\S+-\d+\t\d+\t[0-9.]+ ns/op(\t[0-9.]+ \S+)*$`)
		n := 0
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if strings.HasPrefix(l, "Benchmark") {
				n++
				if !line.MatchString(l) {
					t.Errorf("not a benchstat line: %q", l)
				}
			}
		}
		if n != 11 || !strings.Contains(string(out), "BenchmarkRoute/op=peers/route=socket-") || !strings.Contains(string(out), "BenchmarkRoute/op=send-confirm/route=mcp-") || strings.Contains(string(out), "op=send-confirm/route=floor") {
			t.Errorf("%d benchmark lines:\n%s", n, out)
		}
		// MCP is compared with the floor and both server processes
		// report their CPU per call; the in-process socket route has no
		// process of its own.
		for _, re := range []string{
			`BenchmarkRoute/op=peers/route=mcp-\d+\t.*\t[0-9.]+ floor-ratio\t[0-9.]+ floor-ratio-p99\t[0-9.]+ cpu-us/op\n`,
			`BenchmarkRoute/op=send/route=floor-\d+\t.*\t1\.000 floor-ratio\t.*cpu-us/op\n`,
			`BenchmarkRoute/op=peers/route=socket-\d+\t[^\n]*procs/op\t[0-9.]+ floor-ratio\t[0-9.]+ floor-ratio-p99\n`,
		} {
			if !regexp.MustCompile(re).Match(out) {
				t.Errorf("no line matches %s:\n%s", re, out)
			}
		}
	})
	t.Run("json", func(t *testing.T) {
		out, err := exec.Command(bench, append(args, "--format", "json", "--route", "socket")...).Output()
		var r struct {
			Runs []struct {
				Route string  `json:"route"`
				P50   float64 `json:"p50_ms"`
			} `json:"runs"`
		}
		if err != nil || json.Unmarshal(out, &r) != nil || len(r.Runs) != 3 || r.Runs[0].P50 <= 0 {
			t.Fatalf("%v %s", err, out)
		}
	})
	t.Run("usage", func(t *testing.T) {
		err := exec.Command(bench, "-n", "0").Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Fatalf("exit %v", err)
		}
	})
}

// TestBenchRouteNamedTwice: -route mcp:self with -mcp-alt self=… names one
// route twice, and -route socket,socket another; each is measured once (n
// samples, one connection per peers call).
func TestBenchRouteNamedTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	args := []string{"--sim", "-n", "6", "--warmup", "1", "--spawns", "2", "--agents", "12"}
	out, err := exec.Command(bench, append(args, "--op", "peers", "--route", "socket,socket,mcp:self", "--mcp-alt", "self="+linkBin)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if n := strings.Count(string(out), "peers        socket"); n != 1 {
		t.Errorf("socket reported %d times:\n%s", n, out)
	}
	if !regexp.MustCompile(`(?m)^peers +mcp:self .* 1\.00 +0 `).Match(out) || strings.Count(string(out), "mcp:self") != 1 {
		t.Errorf("mcp:self not measured once with one connection per call:\n%s", out)
	}
}
