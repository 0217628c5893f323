//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package panelock

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The lease line is read from a file any process of the user may have
// written: whatever it holds, reading it never panics, and only a
// well-formed line is a lease.
func FuzzReadRecord(f *testing.F) {
	f.Add([]byte("hl-lease/1 0000012345 h 1764620000000000000\n"))
	f.Add([]byte("hl-lease/1 0000000000 d 0000000000000000000\n"))
	f.Add([]byte("hl-lease/1 -000012345 w 1764620000000000000\n"))
	f.Add([]byte(""))
	f.Add([]byte("garbage"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "r")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		rec, ok := readRecord(fh)
		if ok && (rec.pid <= 0 || len(b) < recordLen || b[recordLen-1] != '\n') {
			t.Fatalf("readRecord(%q) took pid %d from %d bytes, want a positive pid from a whole %d-byte line", b, rec.pid, len(b), recordLen)
		}
	})
}

// A lease line written is read back as written.
func TestRecordRoundTrip(t *testing.T) {
	dir := privateDir(t)
	if err := ensureLeaf(dir, os.Getuid()); err != nil {
		t.Fatal(err)
	}
	l := &Locker{Scope: "s", Dir: dir}
	le, err := l.Lock(t.Context(), "t", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer le.Unlock()
	rec, ok := readRecord(le.f)
	if !ok || rec.pid != os.Getpid() || rec.phase != phaseHeld || time.Until(time.Unix(0, rec.until)) < 59*time.Second {
		t.Fatalf("record read %v: pid %d, phase %c, %v left; want pid %d, phase %c, about a minute left",
			ok, rec.pid, rec.phase, time.Until(time.Unix(0, rec.until)), os.Getpid(), phaseHeld)
	}
	le.Extend(time.Second)
	if rec, ok = readRecord(le.f); !ok || rec.phase != phaseDone {
		t.Fatalf("after Extend: record read %v, phase %c; want phase %c", ok, rec.phase, phaseDone)
	}
}
