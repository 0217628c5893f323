package ndjson

import (
	"errors"
	"runtime"
	"testing"
)

// zeros never ends (like /dev/zero); it counts what it handed out.
type zeros struct{ read int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.read += int64(len(p))
	return len(p), nil
}

// An endless line fails with ErrLineTooLong once past the maximum: the
// reader reads at most one buffer past it and allocates about twice the
// maximum (doubling, not append's slower growth for large slices).
func TestEndlessLineBounded(t *testing.T) {
	const max = 8 << 20
	z := &zeros{}
	r := NewReaderSize(z, max, 64<<10)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := r.ReadLine()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("ReadLine: %v", err)
	}
	if z.read > max+64<<10 {
		t.Errorf("read %d bytes, want at most %d", z.read, max+64<<10)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 5*max/2 {
		t.Errorf("allocated %d bytes for a %d-byte bound, want at most %d", n, max, 5*max/2)
	}
}
