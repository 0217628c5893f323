package limited

import (
	"errors"
	"io"
	"strings"
	"testing"
)

type zeros struct{ read int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.read += int64(len(p))
	return len(p), nil
}

func TestReadAll(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int64
		want string
		err  error
	}{
		{"empty", "", 4, "", nil},
		{"under", "abc", 4, "abc", nil},
		{"exactly", "abcd", 4, "abcd", nil},
		{"one over", "abcde", 4, "", ErrTooLarge},
		{"zero bound", "a", 0, "", ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadAll(strings.NewReader(tt.in), tt.max)
			if !errors.Is(err, tt.err) || string(got) != tt.want {
				t.Fatalf("ReadAll(%q, %d) = %q, %v", tt.in, tt.max, got, err)
			}
		})
	}
}

// An endless input is read to the bound and one byte more, no further.
func TestReadAllEndless(t *testing.T) {
	z := &zeros{}
	allocs := testing.AllocsPerRun(1, func() {
		if _, err := ReadAll(io.LimitReader(z, 1<<40), 1<<20); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("ReadAll: %v", err)
		}
	})
	if z.read > 2*(1<<20+1) { // AllocsPerRun runs f twice
		t.Fatalf("read %d bytes", z.read)
	}
	if allocs > 64 {
		t.Fatalf("%v allocations", allocs)
	}
}

func TestReadFileDevZero(t *testing.T) {
	_, err := ReadFile("/dev/zero", 1<<20)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "/dev/zero") {
		t.Fatalf("ReadFile(/dev/zero): %v", err)
	}
}
