package hosttest

import (
	"flag"
	"os"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/table.golden")

func TestTableGolden(t *testing.T) {
	results := []*Result{
		{Display: "Claude Code", Version: "2.1.328", Mode: "toolsearch",
			NamesBefore: []string{"ToolSearch →", "mcp__herdr_link__herdr_link"}, NamesAfter: []string{"mcp__herdr_link__herdr_link", "mcp__herdr_link__herdr_link_peers"},
			ListChanged: "via tool search", Honoured: true, DormantBytes: 910, ActiveBytes: 3688,
			ResultBytes: map[string]int{"activate": 1875, "peers": 88, "send": 61, "close": 38}, Duration: 2600 * time.Millisecond,
			FootprintFailures: []string{"active herdr-link tool definitions take 3688 bytes per request, over the reference's 2539"}},
		{Display: "Codex CLI", Version: "0.171.0", Mode: "default", NamesBefore: []string{"mcp__herdr_link/herdr_link"}, NamesAfter: []string{"mcp__herdr_link/herdr_link"},
			ListChanged: "no", DormantBytes: 1184, ActiveBytes: 1184, ResultBytes: map[string]int{"activate": 1909, "peers": 122}, Duration: 1800 * time.Millisecond},
		{Display: "OpenCode", Version: "1.18.33", Mode: "default", Failures: []string{"not installed: npm install failed"}},
	}
	got := Table(results) + "\n" + Failures(results)
	const golden = "testdata/table.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("table differs from %s (rerun with -update):\n%s", golden, got)
	}
}

var updateReadme = flag.Bool("update-readme", false, "rewrite the docs/hosts.md's host table from testdata/report.md")

const (
	readmeBegin = "<!-- hosts-table: generated from e2e/internal/hosttest/testdata/report.md by scripts/hosts.sh --record -->"
	readmeEnd   = "<!-- /hosts-table -->"
)

// TestReadmeHostTable keeps the docs/hosts.md's host table identical to the one
// the runner last recorded (scripts/hosts.sh --record).
func TestReadmeHostTable(t *testing.T) {
	report, err := os.ReadFile("testdata/report.md")
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	for _, l := range strings.Split(string(report), "\n") {
		if strings.HasPrefix(l, "|") {
			table.WriteString(l + "\n")
		}
	}
	if table.Len() == 0 {
		t.Fatal("testdata/report.md holds no table")
	}
	const readme = "../../../docs/hosts.md"
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i, j := strings.Index(text, readmeBegin), strings.Index(text, readmeEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/hosts.md lacks the host table markers %q … %q", readmeBegin, readmeEnd)
	}
	want := readmeBegin + "\n\n" + table.String() + "\n"
	got := text[i:j]
	if *updateReadme {
		if err := os.WriteFile(readme, []byte(text[:i]+want+text[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("docs/hosts.md's host table differs from testdata/report.md; run scripts/hosts.sh --record (or go test ./internal/hosttest -run TestReadmeHostTable -update-readme)\ngot:\n%s\nwant:\n%s", got, want)
	}
}
