package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/buildinfo"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/mcpclient"
	"github.com/herdr-link/herdr-link/internal/testsupport/lineserver"
)

// floors measures a bare Unix-socket round trip and a bare process spawn.
func floors(n int) (sock, spawn time.Duration, err error) {
	reply := []byte(`{"id":"1","result":{"type":"ok"}}` + "\n")
	srv, err := lineserver.New(func([]byte) []byte { return reply })
	if err != nil {
		return 0, 0, err
	}
	defer srv.Close()
	path := srv.Path()
	var ds, ps []time.Duration
	buf := make([]byte, 256)
	truePath, _ := exec.LookPath("true")
	for i := 0; i < n; i++ {
		start := time.Now()
		c, err := net.Dial("unix", path)
		if err != nil {
			return 0, 0, err
		}
		_, _ = c.Write([]byte(`{"id":"1","method":"ping","params":{}}` + "\n"))
		_, _ = c.Read(buf)
		c.Close()
		ds = append(ds, time.Since(start))
		if truePath != "" && i < 50 {
			start = time.Now()
			if err := exec.Command(truePath).Run(); err != nil {
				return 0, 0, err
			}
			ps = append(ps, time.Since(start))
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return percentile(ds, 50), percentile(ps, 50), nil
}

// mcpStartup times herdr-link's start to its initialize response.
func mcpStartup(t *target, n int) (time.Duration, error) {
	exe := t.link
	var ds []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		c, err := mcpclient.Start(exe, []string{"serve", "-no-bootstrap", "-log-level", "error"}, t.env())
		if err != nil {
			return 0, err
		}
		_, err = c.Call(context.Background(), "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"}})
		ds = append(ds, time.Since(start))
		c.Close()
		if err != nil {
			return 0, err
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return percentile(ds, 50), nil
}

type sweepRow struct {
	Agents      int     `json:"agents"`
	P50MS       float64 `json:"p50_ms"`
	P99MS       float64 `json:"p99_ms"`
	AllocsPerOp float64 `json:"allocs_per_op"`
	BytesPerOp  float64 `json:"bytes_per_op"`
	ListBytes   int     `json:"agent_list_bytes"`
}

func sweep(c benchConfig) ([]sweepRow, error) {
	var rows []sweepRow
	for _, n := range []int{10, 100, 1000, 10000} {
		cc := c
		cc.sim = true
		t, err := setupTarget(cc, n)
		if err != nil {
			return nil, err
		}
		r := socketRoute(t)
		ctx := context.Background()
		iters := 200
		if n >= 10000 {
			iters = 30
		} else if n >= 1000 {
			iters = 100
		}
		for i := 0; i < 5; i++ {
			if err := r.run(ctx, "peers"); err != nil {
				t.close()
				return nil, err
			}
		}
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		var ds []time.Duration
		for i := 0; i < iters; i++ {
			start := time.Now()
			if err := r.run(ctx, "peers"); err != nil {
				t.close()
				return nil, err
			}
			ds = append(ds, time.Since(start))
		}
		runtime.ReadMemStats(&ms1)
		raw, _ := t.srv.Client().RoundTrip(ctx, []byte(`{"id":"x","method":"agent.list","params":{}}`))
		t.close()
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		rows = append(rows, sweepRow{Agents: n, P50MS: ms(percentile(ds, 50)), P99MS: ms(percentile(ds, 99)),
			AllocsPerOp: float64(ms1.Mallocs-ms0.Mallocs) / float64(iters), BytesPerOp: float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(iters), ListBytes: len(raw)})
	}
	return rows, nil
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			if _, v, ok := strings.Cut(l, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown CPU"
}

// benchRun is one measurement's statistics.
type benchRun struct {
	stats []stat
}

// results are the figures measured besides the routes.
type results struct {
	sockFloor, spawnFloor, startup time.Duration
	rows                           []sweepRow
}

// report writes the runs in c.format.
func report(stdout io.Writer, c benchConfig, t *target, runs []benchRun, r results) {
	sockFloor, spawnFloor, startup, rows := r.sockFloor, r.spawnFloor, r.startup, r.rows
	machine := fmt.Sprintf("%s/%s, %d CPUs, %s, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), runtime.Version())
	switch c.format {
	case "json":
		b, _ := jsonx.MarshalIndent(map[string]any{
			"version": buildinfo.Version(), "machine": machine, "target": t.desc, "n": c.n, "warmup": c.warmup, "concurrency": c.conc,
			"runs": runs[len(runs)-1].stats, "floors": map[string]float64{"unix_round_trip_ms": ms(sockFloor), "process_spawn_ms": ms(spawnFloor)},
			"mcp_start_to_initialize_ms": ms(startup), "sweep": rows,
		})
		fmt.Fprintln(stdout, string(b))
	case "gobench":
		reportGobench(stdout, c, runs, r)
	default:
		reportTable(stdout, c, t, runs, r, machine)
	}
}

// reportGobench writes benchstat input.
func reportGobench(stdout io.Writer, c benchConfig, runs []benchRun, r results) {
	sockFloor, spawnFloor, startup, rows := r.sockFloor, r.spawnFloor, r.startup, r.rows
	fmt.Fprintf(stdout, "goos: %s\ngoarch: %s\npkg: github.com/herdr-link/herdr-link/cmd/herdr-link\ncpu: %s\n", runtime.GOOS, runtime.GOARCH, cpuModel())
	suffix := fmt.Sprintf("-%d", runtime.GOMAXPROCS(0))
	for _, r := range runs {
		for _, s := range r.stats {
			fmt.Fprintf(stdout, "BenchmarkRoute/op=%s/route=%s%s\t%d\t%.0f ns/op\t%.0f p50-ns/op\t%.0f p99-ns/op\t%.2f conns/op\t%.0f procs/op",
				s.Op, s.Route, suffix, s.N, s.MeanNS, s.P50MS*1e6, s.P99MS*1e6, s.ConnsPerOp, s.ProcsPerOp)
			if s.VsFloorP50 > 0 {
				fmt.Fprintf(stdout, "\t%.3f floor-ratio\t%.3f floor-ratio-p99", s.VsFloorP50, s.VsFloorP99)
			}
			if s.HasCPU {
				fmt.Fprintf(stdout, "\t%.1f cpu-us/op", s.CPUPerOpUS)
			}
			fmt.Fprintln(stdout)
		}
	}
	fmt.Fprintf(stdout, "BenchmarkFloor/what=unix-round-trip%s\t500\t%.0f ns/op\n", suffix, float64(sockFloor.Nanoseconds()))
	fmt.Fprintf(stdout, "BenchmarkFloor/what=process-spawn%s\t50\t%.0f ns/op\n", suffix, float64(spawnFloor.Nanoseconds()))
	fmt.Fprintf(stdout, "BenchmarkMCPStart%s\t%d\t%.0f ns/op\n", suffix, c.spawns, float64(startup.Nanoseconds()))
	for _, row := range rows {
		fmt.Fprintf(stdout, "BenchmarkSweep/op=peers/route=socket/agents=%d%s\t1\t%.0f ns/op\t%.0f allocs/op\t%.0f B/op\n", row.Agents, suffix, row.P50MS*1e6, row.AllocsPerOp, row.BytesPerOp)
	}
}

// reportTable writes the human-readable table.
func reportTable(stdout io.Writer, c benchConfig, t *target, runs []benchRun, r results, machine string) {
	sockFloor, spawnFloor, startup, rows := r.sockFloor, r.spawnFloor, r.startup, r.rows
	fmt.Fprintf(stdout, "herdr-bench (herdr-link %s)\n", buildinfo.Version())
	fmt.Fprintf(stdout, "target:  %s\n", t.desc)
	fmt.Fprintf(stdout, "machine: %s\n", machine)
	fmt.Fprintf(stdout, "run:     n=%d per op and route, interleaved, warm-up %d, concurrency %d\n\n", c.n, c.warmup, c.conc)
	fmt.Fprintf(stdout, "%-12s %-7s %8s %8s %8s %8s %8s %9s %9s %9s %9s %8s %9s %9s %9s\n", "op", "route", "min ms", "p50 ms", "p90 ms", "p99 ms", "max ms", "ops/s", "conns/op", "procs/op", "×socket", "poll-pen", "p50×floor", "p99×floor", "cpu µs/op")
	for _, s := range runs[len(runs)-1].stats {
		fmt.Fprintf(stdout, "%-12s %-7s %8.3f %8.3f %8.3f %8.3f %8.3f %9.0f %9.2f %9.0f %9s %8d %9s %9s %9s\n",
			s.Op, s.Route, s.MinMS, s.P50MS, s.P90MS, s.P99MS, s.MaxMS, s.OpsPerSec, s.ConnsPerOp, s.ProcsPerOp, socketCell(s.VsSocket), s.Penalties,
			ratioCell(s.VsFloorP50), ratioCell(s.VsFloorP99), cpuCell(s.CPUPerOpUS, s.HasCPU))
	}
	if t.srv != nil && slices.Contains(c.ops, opSendConfirm) {
		fmt.Fprintf(stdout, "\ndelivery: send = -delivery fast, send-confirm = -delivery confirm (watching until the target's turn starts: its status events, 50 ms agent.get probes);\n          the simulated targets submit 1 ms after Enter, Enter comes 5 ms after the text (Herdr: 300 ms), -submit-hold %v;\n          sends go to the %d peers in turn (consecutive sends to one agent wait for its lock)\n", benchSubmitHold, len(t.peers))
	}
	fmt.Fprintf(stdout, "\nfloors:  bare Unix-socket round trip p50 %.3f ms; bare process spawn p50 %.3f ms\n", ms(sockFloor), ms(spawnFloor))
	fmt.Fprintf(stdout, "mcp:     herdr-link start → initialize response p50 %.2f ms (%d starts)\n", ms(startup), c.spawns)
	if len(rows) > 0 {
		fmt.Fprintf(stdout, "\nsweep: socket peer resolution by session size\n%8s %10s %10s %12s %12s %14s\n", "agents", "p50 ms", "p99 ms", "allocs/op", "bytes/op", "agent.list B")
		for _, r := range rows {
			fmt.Fprintf(stdout, "%8d %10.3f %10.3f %12.0f %12.0f %14d\n", r.Agents, r.P50MS, r.P99MS, r.AllocsPerOp, r.BytesPerOp, r.ListBytes)
		}
	}
}
