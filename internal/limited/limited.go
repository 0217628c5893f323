// Package limited reads whole inputs under a byte bound: files and streams
// that a user names (world files, schema documents) may be anything,
// /dev/zero included, so nothing is read past the bound and an input over
// it is a clear error rather than a truncated one.
package limited

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrTooLarge is the error of an input over its bound.
var ErrTooLarge = errors.New("larger than the size limit")

// ReadAll reads r to its end, failing with ErrTooLarge as soon as more
// than max bytes arrive: it reads at most max+1 bytes.
func ReadAll(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, max)
	}
	return data, nil
}

// ReadFile is ReadAll of the file name, its error naming the file.
func ReadFile(name string, max int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := ReadAll(f, max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}
