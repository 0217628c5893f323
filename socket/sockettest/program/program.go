// Package program is the seam between the simulated Herdr and a real
// program running in a pane's terminal: the [Program] interface package
// ptypane implements with a pseudo-terminal, the [Spec] of the command a
// world file names, and the [Starter] a server calls to run it.
//
// It holds types only, so that the world and the server can speak of
// programs without linking a PTY implementation.
package program

import "errors"

// Spec is a program a pane runs in a pseudo-terminal, as a Herdr pane
// runs a shell or an agent: argv is executed directly (never through a
// shell), with the simulator's environment plus TERM=xterm-256color,
// COLORTERM=truecolor, the pane's HERDR_ENV, HERDR_SOCKET_PATH and
// HERDR_PANE_ID, then Env (later entries win).
type Spec struct {
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

// Validate reports what makes spec unusable.
func (c *Spec) Validate() error {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return errors.New("command: argv must name a program")
	}
	return nil
}

// A Program is a program running in a pane's terminal, seen from the
// terminal's side as Herdr sees it: its input modes, a queue to its
// input, its screen.
//
// For a pane with a Program, agent.prompt writes to the program what
// Herdr writes: the text (as a bracketed paste when BracketedPaste
// reports true, raw otherwise), then Enter in the key encoding of the
// moment, the server's submit delay later; pane.read and agent.read show
// its Screen; its exit is the agent leaving the pane; pane.close and the
// server's Close Close it.
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
	// Exited is closed once the program has exited and what it wrote is
	// on its screen.
	Exited() <-chan struct{}
	// Close ends the program and its process group and closes its
	// terminal; it returns when they are gone (bounded).
	Close() error
}

// Starter starts spec in a pseudo-terminal with the environment entries
// env (the simulator's own, then the pane's).
type Starter func(spec Spec, env []string) (Program, error)
