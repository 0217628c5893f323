package sockettest

import (
	"errors"
	"fmt"
	"os"
)

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
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("sockettest: pane %s: %w", paneID, err)
	}
	if s.Programs == nil {
		return ErrNoPrograms
	}
	id, cwd, err := s.World.CommandPane(paneID)
	if err != nil {
		return err
	}
	if spec.Dir == "" {
		if fi, err := os.Stat(cwd); err == nil && fi.IsDir() {
			spec.Dir = cwd
		}
	}
	prog, err := s.Programs(spec, s.programEnv(id, spec))
	if err != nil {
		return fmt.Errorf("sockettest: pane %s: %w", paneID, err)
	}
	if err := s.World.AttachProgram(id, prog); err != nil {
		_ = prog.Close()
		return err
	}
	return nil
}

// startCommands runs the world file's pane commands (at StartAt).
func (s *Server) startCommands() error {
	for _, j := range s.World.Commands() {
		if err := s.RunCommand(j.PaneID, j.Spec); err != nil {
			return err
		}
	}
	return nil
}

// Program returns the program running in paneID's terminal, or nil.
func (s *Server) Program(paneID string) Program { return s.World.Program(paneID) }

// WithPrograms is an option of simtest.New: the server starts pane
// commands with start (ptypane.Start runs them in pseudo-terminals).
func WithPrograms(start ProgramStarter) func(*Server) {
	return func(s *Server) { s.Programs = start }
}
