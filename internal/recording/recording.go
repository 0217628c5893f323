// Package recording reads, writes and scrubs recordings of Herdr socket
// exchanges: the lines `herdr-sim record` exchanged with a live
// Herdr, which `herdr-sim verify` replays against the simulator.
//
// The format is text, one line per socket line: "> " and the request a
// connection sent, then "< " and each line Herdr answered on it; lines
// starting with "#" are comments. A recording is meant to be attached to
// bug reports, so [Redact] replaces everything that is not Herdr's own
// vocabulary by Herdr's schema (ids, names, labels, paths, titles, cwds,
// messages, map keys, unknown fields) with a stand-in, the same stand-in
// for the same value everywhere.
package recording

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/herdr-link/herdr-link/internal/jsonshape"
	"github.com/herdr-link/herdr-link/internal/ndjson"
)

// Header is the first line of a recording.
const Header = "# herdr-link recording 1"

// MaxTotal bounds a whole recording.
const MaxTotal = 256 << 20

// MaxLine bounds one recorded line (Herdr's answers can be large).
const MaxLine = 64 << 20

// Exchange is one connection: the request line and the lines Herdr wrote.
type Exchange struct {
	Request   []byte
	Responses [][]byte
}

// Method is the request's method, or "".
func (e Exchange) Method() string {
	n, err := jsonshape.Parse(e.Request)
	if err != nil {
		return ""
	}
	return n.Str("method")
}

// Write writes exchanges in the recording format, with comment lines
// (each written with a leading "# ").
func Write(w io.Writer, comments []string, exchanges []Exchange) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, Header)
	for _, c := range comments {
		for _, l := range strings.Split(c, "\n") {
			fmt.Fprintln(bw, "# "+l)
		}
	}
	for _, e := range exchanges {
		if err := oneLine(e.Request); err != nil {
			return err
		}
		fmt.Fprintf(bw, "> %s\n", e.Request)
		for _, r := range e.Responses {
			if err := oneLine(r); err != nil {
				return err
			}
			fmt.Fprintf(bw, "< %s\n", r)
		}
	}
	return bw.Flush()
}

func oneLine(b []byte) error {
	if bytes.ContainsAny(b, "\r\n") {
		return errors.New("recording: a line holds a line break")
	}
	return nil
}

// Parse reads a recording. Every line is bounded before it is buffered:
// the first (the header) by the header's length, the others by MaxLine,
// and the whole recording by MaxTotal; input past a bound is an error, not
// read further.
func Parse(r io.Reader) ([]Exchange, error) { return parse(r, MaxTotal) }

// parse is Parse with the whole recording bounded by maxTotal.
func parse(r io.Reader, maxTotal int) ([]Exchange, error) {
	rd := ndjson.NewReaderSize(r, len(Header)+1, 64<<10) // a "\r" may end it
	var out []Exchange
	total := 0
	for n := 1; ; n++ {
		line, err := rd.ReadLine()
		switch {
		case errors.Is(err, ndjson.ErrLineTooLong) && n == 1:
			return nil, fmt.Errorf("recording: line 1 is not %q (not a herdr-link recording?)", Header)
		case errors.Is(err, ndjson.ErrLineTooLong):
			return nil, fmt.Errorf("recording: line %d is longer than %d bytes", n, MaxLine)
		case errors.Is(err, io.EOF):
			return out, nil
		case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
			return nil, err
		}
		if total += len(line) + 1; total > maxTotal {
			return nil, fmt.Errorf("recording: larger than %d bytes", maxTotal)
		}
		rd.SetMax(MaxLine)
		if perr := parseLine(&out, n, bytes.TrimRight(line, "\r")); perr != nil {
			return nil, perr
		}
		if err != nil { // the last line had no newline
			return out, nil
		}
	}
}

// parseLine adds line n of a recording to out.
func parseLine(out *[]Exchange, n int, line []byte) error {
	switch {
	case n == 1 && string(line) != Header:
		return fmt.Errorf("recording: line 1 is %q, want %q (not a herdr-link recording?)", truncate(line), Header)
	case len(line) == 0 || line[0] == '#':
	case bytes.HasPrefix(line, []byte("> ")):
		*out = append(*out, Exchange{Request: append([]byte(nil), line[2:]...)})
	case bytes.HasPrefix(line, []byte("< ")):
		if len(*out) == 0 {
			return fmt.Errorf("recording: line %d: a response before any request", n)
		}
		last := &(*out)[len(*out)-1]
		last.Responses = append(last.Responses, append([]byte(nil), line[2:]...))
	default:
		return fmt.Errorf("recording: line %d starts with %q, want \"> \", \"< \" or \"#\"", n, truncate(line))
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
