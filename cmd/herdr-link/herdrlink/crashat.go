//go:build !herdrlink_e2e

package herdrlink

// e2eCrashAt is nil: no crash is ever injected (only a test build does;
// see crashat_e2e.go).
func e2eCrashAt() func(step string) { return nil }
