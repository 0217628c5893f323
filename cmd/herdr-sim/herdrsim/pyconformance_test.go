package herdrsim

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/herdrstate"
)

// The Python SDK driver (scripts/py/conformance.py, run by
// scripts/py-conformance.sh) calls every method the simulator implements,
// or says why it cannot; it calls nothing the simulator does not implement.
func TestPythonConformanceCoversImplemented(t *testing.T) {
	src, err := os.ReadFile("../../../scripts/py/conformance.py")
	if err != nil {
		t.Fatal(err)
	}
	called := map[string]bool{}
	for _, m := range regexp.MustCompile(`call\("([a-z_.]+)"`).FindAllSubmatch(src, -1) {
		called[string(m[1])] = true
	}
	skipped := map[string]bool{}
	block := regexp.MustCompile(`(?s)SKIPPED = \{(.*?)\n\}`).FindSubmatch(src)
	if block == nil {
		t.Fatal("conformance.py has no SKIPPED table")
	}
	for _, m := range regexp.MustCompile(`"([a-z_.]+)":`).FindAllSubmatch(block[1], -1) {
		skipped[string(m[1])] = true
	}
	impl := sockettest.Implemented()
	for _, m := range impl {
		if !called[m] && !skipped[m] {
			t.Errorf("the simulator implements %s; conformance.py neither calls it nor says why it skips it", m)
		}
	}
	extra := []string{herdrstate.MethodPaneLinkResolve, sockettest.SimMethodTurns}
	for m := range called {
		if !slices.Contains(impl, m) {
			t.Errorf("conformance.py calls %s, which the simulator does not implement", m)
		}
	}
	for m := range skipped {
		if !slices.Contains(impl, m) && !slices.Contains(extra, m) {
			t.Errorf("conformance.py skips %s, which the simulator does not implement", m)
		}
	}
}
