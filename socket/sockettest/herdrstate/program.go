package sockettest

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/herdr-link/herdr-link/schema"
)

// CommandSpec is a program a pane runs in a pseudo-terminal, as a Herdr
// pane runs a shell or an agent: argv is executed directly (never through
// a shell), with the simulator's environment plus TERM=xterm-256color,
// COLORTERM=truecolor, the pane's HERDR_ENV, HERDR_SOCKET_PATH and
// HERDR_PANE_ID, then Env (later entries win).
type CommandSpec struct {
	Argv []string `json:"argv"`
	// Env is extra KEY=VALUE entries.
	Env []string `json:"env,omitempty"`
	// Dir is the working directory; the pane's cwd when empty (if it
	// exists), else the simulator's.
	Dir string `json:"dir,omitempty"`
	// Rows and Cols are the terminal size (50×200 by default).
	Rows uint16 `json:"rows,omitempty"`
	Cols uint16 `json:"cols,omitempty"`
}

// Default terminal size of a command pane.
const (
	DefaultRows = 50
	DefaultCols = 200
)

func (c *CommandSpec) validate() error {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return errors.New("command: argv must name a program")
	}
	return nil
}

// A Program is a program running in a pane's terminal, seen from the
// terminal's side as Herdr sees it: its input modes, a queue to its
// input, its screen. Package ptypane implements it with a real
// pseudo-terminal (Linux and macOS); [Server.Programs] starts them.
//
// For a pane with a Program, agent.prompt writes to the program what
// Herdr writes: the text (as a bracketed paste when BracketedPaste
// reports true, raw otherwise), then Enter in the key encoding of the
// moment, [Server.SubmitDelay] later; pane.read and agent.read show its
// Screen; its exit is the agent leaving the pane; pane.close and
// [Server.Close] Close it.
type Program interface {
	// BracketedPaste reports whether the program has bracketed paste on.
	BracketedPaste() bool
	// Enter is an Enter key press in the terminal's current key encoding.
	Enter() string
	// Send queues bytes for the program's input, in order, without
	// blocking; an error means none of them were queued.
	Send(b []byte) error
	// Accepts reports whether Send would take n bytes now (nil), or why
	// not (the program exited, its input is too far behind).
	Accepts(n int) error
	// Screen is the terminal's text: the visible screen, or with recent
	// the scrollback above it too; ansi keeps styles as escape sequences.
	Screen(recent, ansi bool) string
	// Exited is closed once the program has exited.
	Exited() <-chan struct{}
	// Close ends the program and its process group and closes its
	// terminal; it returns when they are gone (bounded).
	Close() error
}

// ProgramStarter starts spec in a pseudo-terminal with the environment
// entries env (the simulator's own, then the pane's).
type ProgramStarter func(spec CommandSpec, env []string) (Program, error)

// ErrNoPrograms is returned when a pane has a command and the server has
// no [Server.Programs].
var ErrNoPrograms = errors.New("sockettest: this server cannot run pane commands (set Server.Programs, e.g. to ptypane.Start)")

// programEnv is the environment of paneID's command.
func (s *Server) programEnv(paneID string, spec CommandSpec) []string {
	env := append(os.Environ(), "TERM=xterm-256color", "COLORTERM=truecolor")
	env = append(env, s.Env(paneID)...)
	return append(env, spec.Env...)
}

// RunCommand starts spec in paneID's terminal (the pane keeps its agent,
// if any: its kind and name are what the world says). It fails when the
// pane already runs a program.
func (s *Server) RunCommand(paneID string, spec CommandSpec) error {
	if err := spec.validate(); err != nil {
		return fmt.Errorf("sockettest: pane %s: %w", paneID, err)
	}
	if s.Programs == nil {
		return ErrNoPrograms
	}
	w := s.World
	w.mu.Lock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		w.mu.Unlock()
		return err
	}
	if p.term.prog != nil {
		w.mu.Unlock()
		return fmt.Errorf("sockettest: pane %s already runs a program", paneID)
	}
	id, cwd := p.id, p.cwd
	w.mu.Unlock()
	if spec.Dir == "" {
		if fi, err := os.Stat(cwd); err == nil && fi.IsDir() {
			spec.Dir = cwd
		}
	}
	prog, err := s.Programs(spec, s.programEnv(id, spec))
	if err != nil {
		return fmt.Errorf("sockettest: pane %s: %w", paneID, err)
	}
	w.mu.Lock()
	if w.paneByID(id) != p || p.term.prog != nil || w.closingProgs {
		w.mu.Unlock()
		_ = prog.Close()
		return fmt.Errorf("sockettest: pane %s changed while its command started", paneID)
	}
	term := p.term
	term.prog = prog
	// The real program replaces the modelled receiving end.
	if term.recv != nil {
		term.recv.stop()
	}
	term.recv = &programReceiver{w: w, prog: prog}
	w.progs.Add(1)
	w.mu.Unlock()
	go func() {
		defer w.progs.Done()
		<-prog.Exited()
		w.programExited(term)
	}()
	return nil
}

// SetCommand sets the command paneID runs when the server starts, as the
// world file's "command" field does.
func (w *World) SetCommand(paneID string, spec CommandSpec) error {
	if err := spec.validate(); err != nil {
		return fmt.Errorf("sockettest: pane %s: %w", paneID, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	p.command = &spec
	return nil
}

// startCommands runs the world file's pane commands (at StartAt).
func (s *Server) startCommands() error {
	w := s.World
	w.mu.Lock()
	type job struct {
		id   string
		spec CommandSpec
	}
	var jobs []job
	for _, p := range w.panes() {
		if p.command != nil && p.term.prog == nil {
			jobs = append(jobs, job{p.id, *p.command})
		}
	}
	w.mu.Unlock()
	for _, j := range jobs {
		if err := s.RunCommand(j.id, j.spec); err != nil {
			return err
		}
	}
	return nil
}

// Program returns the program running in paneID's terminal, or nil.
func (s *Server) Program(paneID string) Program {
	w := s.World
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil || p.term.prog == nil {
		return nil
	}
	return p.term.prog
}

// programExited is the agent leaving when its program exits: the pane
// stays, with the program's last screen, as a terminal without an agent.
func (w *World) programExited(term *terminal) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.paneOfTerm(term); p != nil && term.isAgent() {
		w.exit(p)
	} else if r, ok := term.recv.(*programReceiver); ok {
		r.stop()
		term.recv = nil
	}
}

// programReceiver is the receiving end of a terminal whose program is
// real: what Herdr writes goes to it, its own output says whether
// bracketed paste is on and how Enter is encoded.
type programReceiver struct {
	w       *World
	prog    Program
	stopped bool
}

func (r *programReceiver) bracketedPaste() bool { return r.prog.BracketedPaste() }
func (r *programReceiver) enterKey() string     { return r.prog.Enter() }
func (r *programReceiver) accepts(n int) error  { return r.prog.Accepts(n) }

// input hands a write to the program; one it cannot take (it exited in
// between) is lost, as on a closed terminal.
func (r *programReceiver) input(data string) {
	if !r.stopped {
		_ = r.prog.Send([]byte(data))
	}
}

// stateChanged: the program decides for itself.
func (r *programReceiver) stateChanged(from, to schema.AgentStatus) {}

func (r *programReceiver) screen() string { return r.prog.Screen(false, false) }

// stop ends the program in the background (the world lock is held); the
// world waits for it in closePrograms.
func (r *programReceiver) stop() {
	if r.stopped {
		return
	}
	r.stopped = true
	prog := r.prog
	if r.w.closingProgs {
		// closePrograms is closing (and waiting for) every program.
		go func() { _ = prog.Close() }()
		return
	}
	r.w.progs.Add(1)
	go func() {
		defer r.w.progs.Done()
		_ = prog.Close()
	}()
}

// closePrograms ends every program and waits (bounded) for them and
// their exit watchers.
func (w *World) closePrograms(limit time.Duration) {
	w.mu.Lock()
	w.closingProgs = true
	var progs []Program
	for _, p := range w.panes() {
		if p.term.prog != nil {
			progs = append(progs, p.term.prog)
		}
	}
	w.mu.Unlock()
	var wg sync.WaitGroup
	for _, prog := range progs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = prog.Close()
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		w.progs.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(limit):
	}
}
