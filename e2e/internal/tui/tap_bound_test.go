package tui

import (
	"bufio"
	"errors"
	"testing"
)

type zeroFeed struct{ read, stop int64 }

func (z *zeroFeed) Read(p []byte) (int, error) {
	if z.read >= z.stop {
		return 0, errors.New("read far past any bound")
	}
	p = p[:min(int64(len(p)), z.stop-z.read)]
	clear(p)
	z.read += int64(len(p))
	return len(p), nil
}

// The tap reads one SSE event under a bound: an endless event from the
// model server ends the stream with an error instead of filling memory.
func TestReadEventBounded(t *testing.T) {
	z := &zeroFeed{stop: 2*maxEvent + 1<<20}
	rd := bufio.NewReaderSize(&prefixed{s: "data: ", r: z}, 64<<10)
	ev, err := readEvent(rd)
	if !errors.Is(err, errEventTooLarge) || len(ev) != 0 {
		t.Errorf("readEvent: %d bytes, %v", len(ev), err)
	}
	if z.read > maxEvent+128<<10 {
		t.Errorf("read %d bytes of an endless event, want at most %d", z.read, maxEvent+128<<10)
	}
}

type prefixed struct {
	s string
	r *zeroFeed
}

func (p *prefixed) Read(b []byte) (int, error) {
	if p.s != "" {
		n := copy(b, p.s)
		p.s = p.s[n:]
		return n, nil
	}
	return p.r.Read(b)
}
