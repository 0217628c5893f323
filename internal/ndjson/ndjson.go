// Package ndjson reads newline-delimited records with a hard cap on the
// length of one line. Both Herdr's socket protocol and MCP's stdio transport
// frame one JSON value per line; neither has a size limit of its own, so
// every reader in herdr-link goes through this bounded reader instead of
// bufio.Scanner (whose 64 KiB default breaks on large Herdr snapshots).
package ndjson

import (
	"bufio"
	"errors"
	"io"
)

// ErrLineTooLong is returned by [Reader.ReadLine] when a line exceeds the
// reader's maximum. The reader stops in the middle of that line; call
// [Reader.SkipLine] to discard its rest and go on with the next one.
var ErrLineTooLong = errors.New("line exceeds the size limit")

// Reader reads lines of at most Max bytes (not counting the newline).
// A Reader is not safe for concurrent use.
type Reader struct {
	br  *bufio.Reader
	max int
	buf []byte
	// skipped is set when the newline of an oversized line was consumed.
	skipped bool
}

// NewReader returns a Reader over r that accepts lines of up to max bytes.
func NewReader(r io.Reader, max int) *Reader {
	size := 4 << 10
	if max < size {
		size = max + 1
	}
	if size < 16 {
		size = 16
	}
	return &Reader{br: bufio.NewReaderSize(r, size), max: max}
}

// NewReaderSize is NewReader with a read buffer of size bytes (fewer
// system calls for long lines).
func NewReaderSize(r io.Reader, max, size int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, size), max: max}
}

// Reset makes the reader read from r with a new maximum, keeping its
// buffers for reuse.
func (r *Reader) Reset(rd io.Reader, max int) {
	r.br.Reset(rd)
	r.max = max
	r.buf = r.buf[:0]
	r.skipped = false
}

// ReadLine returns the next line without its trailing "\n" (a preceding
// "\r" is kept; JSON parsers treat it as whitespace). The slice is valid
// until the next call.
//
// Errors: io.EOF when the input ended cleanly between lines;
// io.ErrUnexpectedEOF, together with the partial line, when the input ended
// in the middle of a line; [ErrLineTooLong] when the line is longer than the
// maximum; any error of the underlying reader.
func (r *Reader) ReadLine() ([]byte, error) {
	r.buf = r.buf[:0]
	r.skipped = false
	for {
		chunk, err := r.br.ReadSlice('\n')
		n := len(chunk)
		if err == nil {
			n-- // the newline does not count
		}
		if len(r.buf)+n > r.max {
			r.skipped = err == nil
			return nil, ErrLineTooLong
		}
		switch {
		case err == nil:
			if len(r.buf) == 0 {
				return chunk[:len(chunk)-1], nil
			}
			r.buf = append(r.buf, chunk[:len(chunk)-1]...)
			return r.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			r.grow(len(chunk))
			r.buf = append(r.buf, chunk...)
		case errors.Is(err, io.EOF):
			r.buf = append(r.buf, chunk...)
			if len(r.buf) == 0 {
				return nil, io.EOF
			}
			return r.buf, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// grow makes room for n more bytes of a long line: the capacity doubles
// (append's own growth slows to a quarter for large slices, which copies
// a line near the maximum about five times over), never past the maximum
// line and its newline.
func (r *Reader) grow(n int) {
	need := len(r.buf) + n
	if need <= cap(r.buf) {
		return
	}
	size := max(2*cap(r.buf), need)
	if limit := r.max + 1; size > limit {
		size = max(limit, need)
	}
	nb := make([]byte, len(r.buf), size)
	copy(nb, r.buf)
	r.buf = nb
}

// SetMax changes the maximum for the lines read from now on (a first line
// of known shape can be read under a tighter bound than the rest).
func (r *Reader) SetMax(max int) { r.max = max }

// Buffered is how many bytes were read past the last line returned.
func (r *Reader) Buffered() int { return r.br.Buffered() }

// SkipLine discards input up to and including the next newline. It returns
// io.EOF if the input ends first.
func (r *Reader) SkipLine() error {
	if r.skipped {
		r.skipped = false
		return nil
	}
	for {
		_, err := r.br.ReadSlice('\n')
		if err == nil {
			return nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}
