package herdrlink

import "runtime"

// serveProcs sets how many threads may run Go code at once in the MCP
// server: one, unless the GOMAXPROCS environment variable chooses. The
// server spends its time waiting on stdin and on Herdr's socket; with a
// second P, every hand-off between goroutines (the line read, the call's
// worker, the socket's answer) wakes another thread that finds nothing to
// do, which cost about a fifth of a peers call's CPU time in the bench
// (BENCHMARKS.md). Calls still run concurrently: a goroutine waiting on
// Herdr holds no thread, and a long decode is preempted after 10 ms. It
// returns the number in effect.
func serveProcs(getenv func(string) string) int {
	if getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	runtime.GOMAXPROCS(1)
	return 1
}
