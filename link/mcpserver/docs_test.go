package mcpserver_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocsQuoteTheSurface holds the documents that quote the tool surface
// to the code: the number of tools and Claude Code's definition bytes are
// computed here, so a change to a description that moves them fails until
// the prose says the new figures.
func TestDocsQuoteTheSurface(t *testing.T) {
	h := start(t, hopt{})
	h.call(1, "initialize", `{"protocolVersion":"2025-11-25"}`)
	dormant, _ := claudeCodeToolBytes(t, h.call(2, "tools/list", "")[0])
	h.call(3, "tools/call", `{"name":"herdr_link"}`)
	active, names := claudeCodeToolBytes(t, h.call(4, "tools/list", "")[0])
	all := 0
	for _, n := range names {
		if n != "herdr_link" {
			all += active[n]
		}
	}
	all += max(dormant["herdr_link"], active["herdr_link"])
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	wantCount := words[len(names)]
	footprint := fmt.Sprintf("%s bytes per model request dormant and at most %s active", thousands(dormant["herdr_link"]), thousands(all))
	count := regexp.MustCompile(`(?i)(reference's )?\b(two|three|four|five|six|seven|eight|nine|ten) tools\b`)
	for _, doc := range []string{"../../README.md", "../../docs/hosts.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(b)), " ")
		if !strings.Contains(text, footprint) {
			t.Errorf("%s does not say %q", doc, footprint)
		}
		for _, m := range count.FindAllStringSubmatch(text, -1) {
			if m[1] == "" && !strings.EqualFold(m[2], wantCount) {
				t.Errorf("%s says %q; got %d tools in the code, want %q", doc, m[0], len(names), wantCount+" tools")
			}
		}
	}
}

// thousands writes n with a comma every three digits, as the docs do.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
