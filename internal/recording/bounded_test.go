package recording_test

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/recording"
)

// endless is an io.Reader that never ends on its own (like /dev/zero): it
// repeats fill and counts what it handed out. Past stop bytes it fails,
// so a reader that does not bound itself fails the test instead of
// growing until the machine kills it.
type endless struct {
	fill       byte
	read, stop int64
}

var errReadTooFar = errors.New("endless: read far past any bound")

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= e.stop {
		return 0, errReadTooFar
	}
	if rest := e.stop - e.read; int64(len(p)) > rest {
		p = p[:rest]
	}
	clear(p)
	if e.fill != 0 {
		for i := range p {
			p[i] = e.fill
		}
	}
	e.read += int64(len(p))
	return len(p), nil
}

// allocated is how many heap bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Parse stops at its line bound before buffering past it, whatever the
// input: an endless first line (herdr-sim verify /dev/zero) fails at the
// header, an endless later line at MaxLine, each with a clear error.
func TestParseBoundsEndlessInput(t *testing.T) {
	const slack = 128 << 10 // one read buffer and then some
	tests := []struct {
		name     string
		prefix   string
		maxRead  int64
		maxAlloc uint64
		want     string
	}{
		{"endless first line", "", slack, 1 << 20, "line 1"},
		{"endless request line", recording.Header + "\n> ", recording.MaxLine + slack, 3 * recording.MaxLine, "line 2 is longer than"},
		{"endless comment", recording.Header + "\n#", recording.MaxLine + slack, 3 * recording.MaxLine, "line 2 is longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &endless{fill: 0, stop: 2*recording.MaxLine + 1}
			var err error
			n := allocated(func() {
				_, err = recording.Parse(io.MultiReader(strings.NewReader(tt.prefix), src))
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, errReadTooFar) {
				t.Errorf("Parse: %v, want an error with %q", err, tt.want)
			}
			if src.read > tt.maxRead {
				t.Errorf("Parse read %d bytes of an endless input, want at most %d", src.read, tt.maxRead)
			}
			if n > tt.maxAlloc {
				t.Errorf("Parse allocated %d bytes, want at most %d", n, tt.maxAlloc)
			}
		})
	}
}

// A recording of many lines, each within MaxLine, is bounded as a whole.
func TestParseBoundsTotal(t *testing.T) {
	line := "< " + strings.Repeat("x", 64<<10) + "\n"
	r := io.MultiReader(strings.NewReader(recording.Header+"\n> {}\n"), &repeat{s: line, stop: 64 << 20})
	cr := &counting{r: r}
	_, err := recording.ParseMax(cr, 1<<20)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Parse: %v", err)
	}
	if cr.n > 1<<20+(64<<10)+(128<<10) {
		t.Fatalf("Parse read %d bytes", cr.n)
	}
}

type repeat struct {
	s          string
	off        int
	read, stop int64
}

func (r *repeat) Read(p []byte) (int, error) {
	if r.read >= r.stop {
		return 0, errReadTooFar
	}
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.s[r.off:])
		n += c
		r.off = (r.off + c) % len(r.s)
	}
	r.read += int64(n)
	return n, nil
}

type counting struct {
	r io.Reader
	n int64
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
