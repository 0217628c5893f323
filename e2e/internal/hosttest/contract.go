package hosttest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// contractMarker is the first line of the Communication Contract, read
// from PROTOCOL.md's contract block (the normative copy; this package may
// not import link). It has no characters a host would escape, so it reads
// the same in text and in structuredContent JSON.
func contractMarker(repo string) string {
	if repo == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(repo, "PROTOCOL.md"))
	if err != nil {
		return ""
	}
	m := regexp.MustCompile("(?s)```contract\n(.*?)\n").FindSubmatch(b)
	if m == nil {
		return ""
	}
	return strings.TrimSpace(string(m[1]))
}

// checkContract: in every session that activated Herdr Link, the
// Communication Contract reached the model exactly once (PROTOCOL.md §6),
// however the host renders results.
func (r *Result) checkContract(repo string) {
	marker := contractMarker(repo)
	if marker == "" {
		r.failf("PROTOCOL.md's contract block not found under %q", repo)
		return
	}
	for _, s := range r.Sessions {
		if _, ok := firstResult(s.Requests, "activate"); !ok {
			continue
		}
		n := 0
		for _, q := range s.Requests {
			for _, res := range q.Results {
				if res.Action != "" && strings.Contains(res.Text, marker) {
					n++
				}
			}
		}
		if n != 1 {
			r.failf("%s: the Communication Contract reached the model %d times, want once", s.Name, n)
		}
	}
}
