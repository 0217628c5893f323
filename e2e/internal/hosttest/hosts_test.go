package hosttest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/bins"
)

// RunnerBudget bounds the whole runner (every host and mode).
const RunnerBudget = 15 * time.Minute

// TestHosts runs every registered host and mode end to end. It needs the
// install cache: HERDR_LINK_HOSTS=DIR (scripts/hosts.sh sets it and
// installs the pinned hosts there). Optional: HERDR_LINK_BIN (a herdr-link
// binary; else one is built), HERDR_LINK_HOSTS_ONLY (comma-separated
// "host" or "host/mode"), HERDR_LINK_HOSTS_OUT (where sessions and the
// report go; default DIR/last-run).
//
// Long: the runner's top level: install, run every host and mode, report;
// each part is a call.
func TestHosts(t *testing.T) {
	cache := os.Getenv("HERDR_LINK_HOSTS")
	if cache == "" {
		t.Skip("real agent hosts: set HERDR_LINK_HOSTS=<install cache> (see scripts/hosts.sh)")
	}
	cache, err := filepath.Abs(cache)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := LoadReference("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	out := os.Getenv("HERDR_LINK_HOSTS_OUT")
	if out == "" {
		out = filepath.Join(cache, "last-run")
	}
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	// herdr-link and herdr-sim from the tree, built once for the e2e
	// packages (HERDR_LINK_BIN names a herdr-link with herdr-sim beside it).
	linkBin := os.Getenv("HERDR_LINK_BIN")
	if linkBin == "" {
		var err error
		if linkBin, err = bins.Path("herdr-link"); err != nil {
			t.Fatal(err)
		}
	}
	simBin := filepath.Join(filepath.Dir(linkBin), "herdr-sim")
	if _, err := os.Stat(simBin); err != nil {
		t.Fatalf("herdr-sim must be beside herdr-link: %v", err)
	}
	repo, err := bins.Root()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Cache: cache, LinkBin: linkBin, SimBin: simBin, Root: out, Repo: repo, Reference: ref}
	ctx, cancel := context.WithTimeout(t.Context(), RunnerBudget)
	defer cancel()
	if v := os.Getenv("HERDR_LINK_HOSTS_WAITLIMIT"); v != "" {
		probe, ok := Probes[v]
		if !ok {
			t.Fatalf("HERDR_LINK_HOSTS_WAITLIMIT=%s: want 1, hold, hold-silent or timeout-20", v)
		}
		waitLimits(ctx, t, cfg, probe)
		return
	}
	start := time.Now()
	var results []*Result
	for _, h := range Hosts() {
		if !selected(h.Name, "") {
			continue
		}
		if err := h.Install(ctx, cache); err != nil {
			t.Errorf("%v", err)
			for _, m := range h.Modes {
				if selected(h.Name, m.Name) {
					results = append(results, &Result{Host: h.Name, Display: h.Display, Version: h.Version, Mode: m.Name, Note: m.Note,
						Failures: []string{"not installed: " + firstLine(err.Error())}})
				}
			}
			continue
		}
		for _, m := range h.Modes {
			if !selected(h.Name, m.Name) {
				continue
			}
			t.Run(h.Name+"/"+m.Name, func(t *testing.T) {
				r := Run(ctx, h, m, cfg)
				results = append(results, r)
				for _, f := range r.Failures {
					t.Error(f)
				}
				for _, f := range r.FootprintFailures {
					t.Error("footprint: " + f)
				}
				t.Logf("%s %s %s: %s in %s", r.Display, r.Version, r.Mode, r.Verdict(), r.Duration.Round(time.Millisecond))
			})
		}
	}
	if d := time.Since(start); d > RunnerBudget {
		t.Errorf("the runner took %s, over its budget of %s", d.Round(time.Second), RunnerBudget)
	}
	report := Report(results, time.Now())
	if err := os.WriteFile(filepath.Join(out, "report.md"), []byte(report), 0o644); err != nil {
		t.Error(err)
	}
	if b, err := JSON(results); err == nil {
		if err := os.WriteFile(filepath.Join(out, "report.json"), b, 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Logf("report: %s\n%s", filepath.Join(out, "report.md"), Table(results))
}

// waitLimits runs the wait-limit scenario (waitlimit.go) instead of the
// messaging one, for every selected host and mode, and writes
// waitlimit.md and waitlimit.json beside the sessions. A host's limit is a
// measurement: only a scenario that could not run fails.
func waitLimits(ctx context.Context, t *testing.T, cfg Config, probe Probe) {
	var ws []*WaitLimit
	for _, h := range Hosts() {
		if !selected(h.Name, "") {
			continue
		}
		if err := h.Install(ctx, cfg.Cache); err != nil {
			t.Errorf("%v", err)
			continue
		}
		for _, m := range h.Modes {
			if !selected(h.Name, m.Name) {
				continue
			}
			t.Run(h.Name+"/"+m.Name, func(t *testing.T) {
				w := RunWaitLimit(ctx, h, m, cfg, probe)
				ws = append(ws, w)
				if !w.Called {
					t.Errorf("no wait call reached herdr-link: %s", w.Err)
				}
				t.Logf("%s %s %s: %s (%s)", w.Display, w.Version, w.Mode, w.Verdict(), w.Err)
			})
		}
	}
	table, err := writeWaitLimit(cfg.Root, ws)
	if err != nil {
		t.Error(err)
	}
	t.Logf("wait limits: %s\n%s", filepath.Join(cfg.Root, "waitlimit.md"), table)
}

func selected(host, mode string) bool {
	only := os.Getenv("HERDR_LINK_HOSTS_ONLY")
	if only == "" {
		return true
	}
	for _, s := range strings.Split(only, ",") {
		h, m, hasMode := strings.Cut(strings.TrimSpace(s), "/")
		if h != host {
			continue
		}
		if mode == "" || !hasMode || m == mode {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
