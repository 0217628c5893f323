package link

import "testing"

// mustLink makes the Link of cfg or fails the test.
func mustLink(t testing.TB, cfg Config) *Link {
	t.Helper()
	l, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return l
}
