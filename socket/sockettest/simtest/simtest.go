// Package simtest is the testing convenience for socket/sockettest: a
// simulator per test, closed with it, whose every line is validated
// against Herdr's committed schema with a full JSON Schema validator.
//
// It lives apart from sockettest so that binaries that embed the simulator
// (herdr-link demo and bench, herdr-sim) link neither the testing package
// nor the validator library.
package simtest

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/herdr-link/herdr-link/internal/schemacheck"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

var (
	once    sync.Once
	checker sockettest.Checker
	loadErr error
)

// Checker returns the process's schema validator, loaded once from
// ../shared beside the repository (or $HERDR_API_SCHEMA).
func Checker() (sockettest.Checker, error) {
	once.Do(func() {
		p, err := schemacheck.Find()
		if err != nil {
			loadErr = err
			return
		}
		checker, loadErr = schemacheck.Load(p)
	})
	return checker, loadErr
}

// New starts a server for w (the default world when nil), applies opts
// before it starts, and closes it when tb ends. Every line it writes is
// validated against Herdr's schema; a line the schema rejects fails tb.
// Without the schema the check is skipped with a log line, except in CI
// (CI set), where that is a failure.
func New(tb testing.TB, w *sockettest.World, opts ...func(*sockettest.Server)) *sockettest.Server {
	tb.Helper()
	s := sockettest.NewUnstartedServer(w)
	if c, err := Checker(); err == nil {
		s.Check = c.Line
	} else if os.Getenv("CI") != "" {
		tb.Fatalf("simtest: Herdr's schema is needed in CI: %v", err)
	} else {
		tb.Logf("simtest: schema validation off: %v", err)
	}
	s.Logf = tb.Logf
	for _, o := range opts {
		o(s)
	}
	s.Start()
	tb.Cleanup(func() {
		s.Logf = nil
		s.Close()
		for _, err := range s.CheckErrors() {
			tb.Errorf("simtest: a response fails Herdr's schema: %v", err)
		}
	})
	return s
}

// ValidatedLines is how many lines servers made by [New] wrote and the
// schema accepted, in this process.
func ValidatedLines() int64 {
	if c, err := Checker(); err == nil {
		return c.Count()
	}
	return 0
}

// Main runs a test package's tests, then says how many simulator lines were
// validated (a package's TestMain: os.Exit(simtest.Main(m))).
func Main(m *testing.M) int {
	code := m.Run()
	if n := ValidatedLines(); n > 0 {
		fmt.Printf("simtest: %d simulator lines validated against Herdr's schema\n", n)
	}
	return code
}
