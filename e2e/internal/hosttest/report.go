package hosttest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Table renders results as the Markdown table the docs/hosts.md's host section
// is backed by.
func Table(results []*Result) string {
	var b strings.Builder
	b.WriteString("| host | version | mode | tools before activation | tools after | list_changed | tool defs per request, dormant / active (bytes) | results: activate / peers / send / close (bytes) | time | verdict |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s |\n",
			r.Display, r.Version, r.Mode, code(r.NamesBefore), code(r.NamesAfter), r.ListChanged,
			num(r.DormantBytes), num(r.ActiveBytes), resultBytes(r.ResultBytes),
			r.Duration.Round(100*time.Millisecond), r.Verdict())
	}
	return b.String()
}

// Failures lists every failure of the results, one per line.
func Failures(results []*Result) string {
	var b strings.Builder
	for _, r := range results {
		for _, f := range append(append([]string(nil), r.Failures...), r.FootprintFailures...) {
			fmt.Fprintf(&b, "- %s %s: %s\n", r.Display, r.Mode, f)
		}
	}
	return b.String()
}

// Report is the whole run as Markdown: the table, the failures, the notes.
func Report(results []*Result, when time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Host runner results (%s)\n\n", when.UTC().Format("2006-01-02 15:04 UTC"))
	b.WriteString("Written by `scripts/hosts.sh` (internal/hosttest). Byte figures are the compact JSON of herdr-link's tool\n")
	b.WriteString("definitions in one model request (largest dormant and active request) and the text of each herdr-link result\n")
	b.WriteString("as the host passed it to the model.\n\n")
	b.WriteString(Table(results))
	if f := Failures(results); f != "" {
		b.WriteString("\nFailures:\n\n" + f)
	}
	b.WriteString("\nModes:\n\n")
	for _, r := range results {
		fmt.Fprintf(&b, "- %s %s: %s\n", r.Display, r.Mode, r.Note)
	}
	b.WriteString("\nOutside Herdr (no HERDR_* variables), did herdr-link's reason for the empty tool list reach the model?\n\n")
	for _, r := range results {
		if r.OutsideShown != "" {
			fmt.Fprintf(&b, "- %s %s: %s\n", r.Display, r.Mode, r.OutsideShown)
		}
	}
	return b.String()
}

// JSON is the whole run as JSON (every session's model log included).
func JSON(results []*Result) ([]byte, error) {
	return json.MarshalIndent(results, "", "  ")
}

// code renders tool names; names that extend the first one (the
// gateway) are shortened to "…_suffix".
func code(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	var b strings.Builder
	base := ""
	for i, n := range names {
		switch {
		case strings.HasSuffix(n, "→"):
			b.WriteString(n + " ")
			continue
		case i > 0 && !strings.HasSuffix(names[i-1], "→"):
			b.WriteString(", ")
		}
		short := n
		if base != "" && strings.HasPrefix(n, base+"_") {
			short = "…" + n[len(base):]
		} else if base == "" {
			base = strings.TrimSuffix(n, " (deferred)")
		}
		b.WriteString("`" + short + "`")
	}
	return b.String()
}

func num(n int) string {
	if n == 0 {
		return "–"
	}
	s := fmt.Sprint(n)
	if len(s) > 3 {
		s = s[:len(s)-3] + "," + s[len(s)-3:]
	}
	return s
}

func resultBytes(m map[string]int) string {
	var parts []string
	for _, op := range []string{"activate", "peers", "send", "close"} {
		if v, ok := m[op]; ok {
			parts = append(parts, num(v))
		} else {
			parts = append(parts, "–")
		}
	}
	return strings.Join(parts, " / ")
}
