package sockettest

import (
	"bytes"
	"testing"
)

// CheckParsers compares the fast and the exact request parsers on line.
func CheckParsers(t *testing.T, line []byte) {
	line = bytes.TrimSpace(line)
	fast, ok := fastParse(line)
	slow, err := slowParse(line)
	if ok && err != nil {
		t.Fatalf("fast path accepts %q, serde path rejects it: %v", line, err)
	}
	if ok && (fast.ID != slow.ID || fast.Method != slow.Method || !bytes.Equal(fast.Params, slow.Params)) {
		t.Fatalf("parsers disagree on %q: %+v vs %+v", line, fast, slow)
	}
}

// LockWorld holds w's lock (the app loop busy) until the returned func.
func LockWorld(w *World) (unlock func()) {
	w.mu.Lock()
	return w.mu.Unlock
}
