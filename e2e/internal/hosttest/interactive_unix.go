//go:build unix

package hosttest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest/program"
	"github.com/herdr-link/herdr-link/socket/sockettest/ptypane"
)

// enterAfter is how long after the text Herdr types Enter.
const enterAfter = 300 * time.Millisecond

// runInteractive is run for an [Interactive] host: cmd (its environment
// and directory set) runs in a PTY until the screen shows s.Done, the
// timeout passes or ctx ends. Stdout is the last screen.
func runInteractive(ctx context.Context, s *Session, cmd *exec.Cmd, timeout time.Duration) Outcome {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := ptypane.StartPane(program.Spec{Argv: cmd.Args, Dir: cmd.Dir}, append(cmd.Env, "TERM=xterm-256color"))
	if err != nil {
		return Outcome{Err: err}
	}
	o := Outcome{Err: drive(ctx, s, p)}
	o.Stdout = p.Screen(false, false)
	_ = p.Close()
	o.Duration = time.Since(start)
	o.Strays = killMarked(s.Marker)
	if errors.Is(o.Err, context.DeadlineExceeded) {
		o.Err = fmt.Errorf("%s did not finish within %s", s.Host.Bin, timeout)
	}
	return o
}

// drive waits for the TUI and herdr-link, types the prompt, then waits
// for the script's last text on the screen.
func drive(ctx context.Context, s *Session, p *ptypane.Pane) error {
	ready := s.Host.Interactive.Ready
	if err := p.WaitScreen(ctx, func(screen string) bool { return strings.Contains(screen, ready) }); err != nil {
		return fmt.Errorf("the TUI never drew %q: %w", ready, err)
	}
	for {
		lines, _ := ReadTap(s.TapLog())
		if toolsListed(lines) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("herdr-link never answered tools/list: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	// As herdr-link and Herdr type into this kind: raw, then Enter.
	if err := p.Send([]byte(link.TypedText(s.Host.Kind, s.Prompt))); err != nil {
		return err
	}
	time.Sleep(enterAfter)
	if err := p.Send([]byte("\r")); err != nil {
		return err
	}
	if s.Done == "" {
		return errors.New("interactive session without a last text to wait for")
	}
	if err := p.WaitScreen(ctx, func(screen string) bool { return strings.Contains(screen, s.Done) }); err != nil {
		return fmt.Errorf("the screen never showed %q: %w", s.Done, err)
	}
	return nil
}
