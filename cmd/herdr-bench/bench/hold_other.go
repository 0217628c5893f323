//go:build !linux

package bench

import (
	"errors"
	"time"
)

// procCPU needs Linux's /proc.
func procCPU(int) (time.Duration, error) {
	return 0, errors.New("the CPU of another process is read from /proc (Linux only)")
}
