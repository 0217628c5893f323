package ndjson

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadLine(t *testing.T) {
	long := strings.Repeat("x", 40)
	tests := []struct {
		name  string
		in    string
		max   int
		lines []string
		end   error
	}{
		{"two lines", "a\nbb\n", 10, []string{"a", "bb"}, io.EOF},
		{"partial last line", "a\nbb", 10, []string{"a", "bb"}, io.ErrUnexpectedEOF},
		{"empty input", "", 10, nil, io.EOF},
		{"blank line", "\n", 10, []string{""}, io.EOF},
		{"exactly max", "abcd\n", 4, []string{"abcd"}, io.EOF},
		{"one over max", "abcde\n", 4, nil, ErrLineTooLong},
		{"longer than buffer", long + "\n", 100, []string{long}, io.EOF},
		{"partial at max", "abcd", 4, []string{"abcd"}, io.ErrUnexpectedEOF},
		{"partial over max", "abcde", 4, nil, ErrLineTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.in), tt.max)
			var got []string
			var err error
			for {
				var line []byte
				line, err = r.ReadLine()
				if err != nil {
					if line != nil {
						got = append(got, string(line))
					}
					break
				}
				got = append(got, string(line))
			}
			if !errors.Is(err, tt.end) {
				t.Fatalf("end error = %v, want %v", err, tt.end)
			}
			if strings.Join(got, "|") != strings.Join(tt.lines, "|") || len(got) != len(tt.lines) {
				t.Fatalf("lines = %q, want %q", got, tt.lines)
			}
		})
	}
}

func TestSkipAfterTooLong(t *testing.T) {
	for _, in := range []string{"0123456789\nok\n", strings.Repeat("y", 100000) + "\nok\n", "01234\nok\n"} {
		r := NewReader(strings.NewReader(in), 4)
		if _, err := r.ReadLine(); !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("first read: %v, want ErrLineTooLong", err)
		}
		if err := r.SkipLine(); err != nil {
			t.Fatalf("skip: %v", err)
		}
		line, err := r.ReadLine()
		if err != nil || string(line) != "ok" {
			t.Fatalf("after skip: %q, %v; want \"ok\"", line, err)
		}
	}
}

func FuzzReadLine(f *testing.F) {
	f.Add([]byte("a\nbb\nccc"), 2)
	f.Add([]byte("\n\n\n"), 0)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		r := NewReader(strings.NewReader(string(in)), max)
		total := 0
		for i := 0; i < len(in)+2; i++ {
			line, err := r.ReadLine()
			if errors.Is(err, ErrLineTooLong) {
				if r.SkipLine() != nil {
					return
				}
				continue
			}
			if len(line) > max {
				t.Fatalf("line of %d bytes exceeds max %d", len(line), max)
			}
			total += len(line)
			if err != nil {
				return
			}
		}
		if total > len(in) {
			t.Fatalf("read %d bytes from %d", total, len(in))
		}
	})
}
