package hosttest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Sim is a running `herdr-sim serve` (built from the tree) with the
// scenario's world; it is queried through herdr-sim's own verbs, as a
// user would.
type Sim struct {
	bin, sock, dir string
	cmd            *exec.Cmd
	done           chan error
	stderr         bytes.Buffer
}

// Turn is one turn the agent in a pane received (herdr-sim turns).
type Turn struct {
	At   time.Time `json:"at"`
	Text string    `json:"text"`
}

// ErrPaneGone is returned for a pane that no longer exists.
var ErrPaneGone = errors.New("pane not found")

// StartSim starts herdr-sim serve on a socket in a new temporary folder
// (short, so it fits sun_path) with the given world.
func StartSim(bin, world string) (*Sim, error) {
	dir, err := os.MkdirTemp("", "hl-hosts")
	if err != nil {
		return nil, err
	}
	s := &Sim{bin: bin, dir: dir, sock: filepath.Join(dir, "herdr.sock"), done: make(chan error, 1)}
	wf := filepath.Join(dir, "world.json")
	if err := os.WriteFile(wf, []byte(world), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.cmd = exec.Command(bin, "serve", "--socket", s.sock, "--world", wf)
	s.cmd.Stderr = &s.stderr
	ownGroup(s.cmd)
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start herdr-sim: %w", err)
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		n := 0
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "HERDR_") {
				if n++; n == 3 {
					ready <- nil
				}
			}
		}
		ready <- fmt.Errorf("herdr-sim serve stopped before it was ready")
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() { s.done <- s.cmd.Wait() }()
	select {
	case err = <-ready:
	case <-time.After(10 * time.Second):
		err = fmt.Errorf("herdr-sim serve not ready within 10 s")
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("%w: %s", err, s.stderr.String())
	}
	return s, nil
}

// Close stops the simulator and removes its folder.
func (s *Sim) Close() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(3 * time.Second):
			killGroup(s.cmd.Process.Pid)
			<-s.done
		}
	}
	os.RemoveAll(s.dir)
}

// Env is the HERDR_* environment of a pane.
func (s *Sim) Env(pane string) []string {
	return []string{"HERDR_ENV=1", "HERDR_SOCKET_PATH=" + s.sock, "HERDR_PANE_ID=" + pane}
}

func (s *Sim) verb(args ...string) ([]byte, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = append(os.Environ(), "HERDR_SOCKET_PATH="+s.sock)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.Bytes(), errb.Bytes(), err
}

// Turns returns what the agent in pane received, oldest first.
func (s *Sim) Turns(pane string) ([]Turn, error) {
	out, errb, err := s.verb("turns", "--socket", s.sock, pane)
	if err != nil {
		if bytes.Contains(errb, []byte("pane_not_found")) {
			return nil, ErrPaneGone
		}
		return nil, fmt.Errorf("herdr-sim turns %s: %v: %s", pane, err, errb)
	}
	var turns []Turn
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var t Turn
		if err := json.Unmarshal(line, &t); err != nil {
			return nil, fmt.Errorf("herdr-sim turns %s: %q: %v", pane, line, err)
		}
		turns = append(turns, t)
	}
	return turns, nil
}

// Panes returns the ids of the open panes.
func (s *Sim) Panes() ([]string, error) {
	out, errb, err := s.verb("pane", "list")
	if err != nil {
		return nil, fmt.Errorf("herdr-sim pane list: %v: %s", err, errb)
	}
	var r struct {
		Result struct {
			Panes []struct {
				PaneID string `json:"pane_id"`
			} `json:"panes"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("herdr-sim pane list: %v", err)
	}
	var ids []string
	for _, p := range r.Result.Panes {
		ids = append(ids, p.PaneID)
	}
	return ids, nil
}

// Read returns what pane.read shows for pane (herdr-sim pane read): the
// turns the agent received and whatever waits in its composer or queue.
func (s *Sim) Read(pane string) (string, error) {
	out, errb, err := s.verb("pane", "read", pane)
	if err != nil {
		if bytes.Contains(errb, []byte("pane_not_found")) {
			return "", ErrPaneGone
		}
		return "", fmt.Errorf("herdr-sim pane read %s: %v: %s", pane, err, errb)
	}
	var r struct {
		Result struct {
			Read struct {
				Text      string `json:"text"`
				Truncated bool   `json:"truncated"`
			} `json:"read"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return "", fmt.Errorf("herdr-sim pane read %s: %v", pane, err)
	}
	if r.Result.Read.Truncated {
		return "", fmt.Errorf("herdr-sim pane read %s: truncated", pane)
	}
	return r.Result.Read.Text, nil
}
