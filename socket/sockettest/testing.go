package sockettest

import (
	"os"
	"sync"
	"testing"

	"github.com/herdr-link/herdr-link/internal/schemacheck"
)

var (
	validatorOnce sync.Once
	validator     *schemacheck.Validator
	validatorErr  error
)

// Validator returns the process-wide schema validator that [New] installs,
// or an error when Herdr's schema document cannot be found.
func Validator() (*schemacheck.Validator, error) {
	validatorOnce.Do(func() {
		p, err := schemacheck.Find()
		if err != nil {
			validatorErr = err
			return
		}
		validator, validatorErr = schemacheck.Load(p)
	})
	return validator, validatorErr
}

// ValidatedLines is how many lines servers made by [New] wrote and the
// schema accepted, in this process.
func ValidatedLines() int64 {
	v, err := Validator()
	if err != nil {
		return 0
	}
	return v.Count()
}

// New starts a server for w (the default world when nil), applies opts
// before it starts, and closes it when tb ends. Every line it writes is
// validated against Herdr's schema; a line the schema rejects fails tb.
// Without the schema document the check is skipped, except in CI (CI set),
// where that is a failure.
func New(tb testing.TB, w *World, opts ...func(*Server)) *Server {
	tb.Helper()
	s := NewUnstartedServer(w)
	if v, err := Validator(); err == nil {
		s.Check = v.Line
	} else if os.Getenv("CI") != "" {
		tb.Fatalf("sockettest: %v", err)
	} else {
		tb.Logf("sockettest: schema validation off: %v", err)
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
			tb.Errorf("sockettest: a response fails Herdr's schema: %v", err)
		}
	})
	return s
}
