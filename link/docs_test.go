package link_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The prose is split by reader: README.md is the front page, PROTOCOL.md
// the guarantees, docs/ the manuals. This keeps the first two short and
// keeps every shipped text self-contained: nothing points at the shared
// material beside the clone or at the tracker.
func TestDocsByReader(t *testing.T) {
	for doc, limit := range map[string]int{"../README.md": 10_000, "../PROTOCOL.md": 20_000, "../BENCHMARKS.md": 12_000} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > limit {
			t.Errorf("%s: got %d bytes, want at most %d (decimal: 10 KB is 10,000 bytes); move detail to docs/", doc, len(b), limit)
		}
	}
	forbidden := regexp.MustCompile(`\.\./shared|(?i)\b(issue|task) #?[0-9]+\b`)
	check := func(path string, text string) {
		for i, line := range strings.Split(text, "\n") {
			if m := forbidden.FindString(line); m != "" {
				t.Errorf("%s:%d refers to %q; state the fact in the repository instead", path, i+1, m)
			}
		}
	}
	for _, doc := range []string{"../README.md", "../PROTOCOL.md"} {
		b, _ := os.ReadFile(doc)
		check(doc, string(b))
	}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		switch {
		case strings.HasPrefix(path, filepath.Join("..", "docs")+string(filepath.Separator)) && strings.HasSuffix(path, ".md"):
			b, _ := os.ReadFile(path)
			check(path, string(b))
		case strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") && !isGenerator(path):
			b, _ := os.ReadFile(path)
			check(path, goComments(string(b)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// isGenerator: generators and the harnesses that load Herdr's schema read it
// from the shared directory by design.
func isGenerator(path string) bool {
	p := filepath.ToSlash(path)
	return strings.Contains(p, "/schema/gen/") || strings.Contains(p, "/schema/internal/gen/") || strings.Contains(p, "/internal/recording/gen/") ||
		strings.HasSuffix(p, "/schema/doc.go") || strings.Contains(p, "schemacheck") || strings.Contains(p, "/simtest/")
}

// goComments returns the comment lines of a Go file (line comments only
// and block comment lines), keeping line numbers.
func goComments(src string) string {
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		if j := strings.Index(l, "//"); j >= 0 {
			lines[i] = l[j:]
		} else if !strings.HasPrefix(strings.TrimSpace(l), "*") {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}
