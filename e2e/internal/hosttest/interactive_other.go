//go:build !unix

package hosttest

import (
	"context"
	"errors"
	"os/exec"
	"time"
)

func runInteractive(ctx context.Context, s *Session, cmd *exec.Cmd, timeout time.Duration) Outcome {
	return Outcome{Err: errors.New("interactive hosts need a Unix PTY")}
}
