package sockettest

import (
	"errors"
	"os"
	"sync"
	"testing"
)

// A Checker validates lines the server writes; Count is how many passed.
type Checker interface {
	Line(line []byte) error
	Count() int64
}

var (
	checkerMu   sync.Mutex
	checkerLoad func() (Checker, error)
	checkerOnce sync.Once
	checker     Checker
	errChecker  = errors.New("sockettest: no schema checker registered (import internal/schemacheck/autoload in the test)")
)

// RegisterChecker installs the loader of the checker [New] gives every
// server. Tests register a full JSON Schema validator through
// internal/schemacheck/autoload; keeping it out of this package keeps the
// validator library out of binaries that embed the simulator.
func RegisterChecker(load func() (Checker, error)) {
	checkerMu.Lock()
	defer checkerMu.Unlock()
	checkerLoad = load
}

func loadChecker() (Checker, error) {
	checkerOnce.Do(func() {
		checkerMu.Lock()
		load := checkerLoad
		checkerMu.Unlock()
		if load != nil {
			checker, errChecker = load()
		}
	})
	return checker, errChecker
}

// ValidatedLines is how many lines servers made by [New] wrote and the
// schema accepted, in this process.
func ValidatedLines() int64 {
	c, err := loadChecker()
	if err != nil {
		return 0
	}
	return c.Count()
}

// New starts a server for w (the default world when nil), applies opts
// before it starts, and closes it when tb ends. Every line it writes is
// validated by the registered checker (Herdr's schema); a line the schema
// rejects fails tb. Without a checker the check is skipped, except in CI
// (CI set), where that is a failure.
func New(tb testing.TB, w *World, opts ...func(*Server)) *Server {
	tb.Helper()
	s := NewUnstartedServer(w)
	if c, err := loadChecker(); err == nil {
		s.Check = c.Line
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
