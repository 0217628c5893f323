package herdrstate

import (
	"fmt"
	"sync"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest/program"
)

// CommandSpec is the command a pane runs (see package program).
type CommandSpec = program.Spec

// Program is a real program in a pane's terminal (see package program).
type Program = program.Program

// PaneCommand is a pane whose world file names a command.
type PaneCommand struct {
	PaneID string
	Spec   CommandSpec
}

// Commands lists the panes with a command and no program yet, in layout
// order: what a server starts once its socket answers.
func (w *World) Commands() []PaneCommand {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []PaneCommand
	for _, p := range w.panes() {
		if p.command != nil && p.term.prog == nil {
			out = append(out, PaneCommand{p.id, *p.command})
		}
	}
	return out
}

// CommandPane resolves the pane a command is to run in: its current id
// and cwd. It fails when the pane does not exist or already runs a
// program.
func (w *World) CommandPane(paneID string) (id, cwd string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return "", "", err
	}
	if p.term.prog != nil {
		return "", "", fmt.Errorf("sockettest: pane %s already runs a program", paneID)
	}
	return p.id, p.cwd, nil
}

// AttachProgram makes prog the program of pane id's terminal (id as
// [World.CommandPane] returned it): the real program replaces the
// modelled receiving end, and its exit is the agent leaving. It fails
// when the pane changed meanwhile or the world is closing its programs;
// the caller then closes prog.
func (w *World) AttachProgram(id string, prog Program) error {
	w.mu.Lock()
	p := w.paneByID(id)
	if p == nil || p.term.prog != nil || w.closingProgs {
		w.mu.Unlock()
		return fmt.Errorf("sockettest: pane %s changed while its command started", id)
	}
	term := p.term
	term.prog = prog
	if term.recv != nil {
		term.recv.Stop()
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

// Program returns the program running in paneID's terminal, or nil.
func (w *World) Program(paneID string) Program {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil || p.term.prog == nil {
		return nil
	}
	return p.term.prog
}

// SetCommand sets the command paneID runs when the server starts, as the
// world file's "command" field does.
func (w *World) SetCommand(paneID string, spec CommandSpec) error {
	if err := spec.Validate(); err != nil {
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

// programExited is the agent leaving when its program exits: the pane
// stays, with the program's last screen, as a terminal without an agent.
func (w *World) programExited(term *terminal) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.paneOfTerm(term); p != nil && term.isAgent() {
		w.exit(p)
	} else if r, ok := term.recv.(*programReceiver); ok {
		r.Stop()
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

func (r *programReceiver) BracketedPaste() bool { return r.prog.BracketedPaste() }
func (r *programReceiver) EnterKey() string     { return r.prog.Enter() }
func (r *programReceiver) accepts(n int) error  { return r.prog.Accepts(n) }

// kittyFlags is the kitty keyboard flags the program set, when it tells
// (a PTY pane does): Herdr encodes keys by them.
func (r *programReceiver) kittyFlags() uint32 {
	if k, ok := r.prog.(interface{ KittyFlags() uint32 }); ok {
		return k.KittyFlags()
	}
	return 0
}

// Input hands a write to the program; one it cannot take (it exited in
// between) is lost, as on a closed terminal.
func (r *programReceiver) Input(data string) {
	if !r.stopped {
		_ = r.prog.Send([]byte(data))
	}
}

// StateChanged: the program decides for itself.
func (r *programReceiver) StateChanged(from, to schema.AgentStatus) {}

func (r *programReceiver) Screen() string { return r.prog.Screen(false, false) }

// Stop ends the program in the background (the world lock is held); the
// world waits for it in ClosePrograms.
func (r *programReceiver) Stop() {
	if r.stopped {
		return
	}
	r.stopped = true
	prog := r.prog
	if r.w.closingProgs {
		// ClosePrograms is closing (and waiting for) every program.
		go func() { _ = prog.Close() }()
		return
	}
	r.w.progs.Add(1)
	go func() {
		defer r.w.progs.Done()
		_ = prog.Close()
	}()
}

// ClosePrograms ends every program and waits (bounded) for them and
// their exit watchers.
func (w *World) ClosePrograms(limit time.Duration) {
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
