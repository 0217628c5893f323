package sockettest

import (
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest/herdrstate"
	"github.com/herdr-link/herdr-link/socket/sockettest/program"
	"github.com/herdr-link/herdr-link/socket/sockettest/receiver"
)

// The world a [Server] serves is package herdrstate's; these names keep
// the simulator usable from one import, as httptest is.

// World is the simulated session state (see package herdrstate).
type World = herdrstate.World

// The world file (see package herdrstate).
type (
	WorldSpec     = herdrstate.WorldSpec
	WorkspaceSpec = herdrstate.WorkspaceSpec
	TabSpec       = herdrstate.TabSpec
	PaneSpec      = herdrstate.PaneSpec
	AgentSpec     = herdrstate.AgentSpec
)

// The receiving end (see package receiver).
type (
	Submission = receiver.Submission
	Behaviour  = receiver.Behaviour
)

// Real programs in panes (see package program).
type (
	CommandSpec    = program.Spec
	Program        = program.Program
	ProgramStarter = program.Starter
)

// Clocks of a world (see package herdrstate).
type (
	Clock     = herdrstate.Clock
	FakeClock = herdrstate.FakeClock
)

// DefaultWorldJSON is the built-in world file.
const DefaultWorldJSON = herdrstate.DefaultWorldJSON

// DefaultTurnTime is how long a modelled turn lasts unless configured.
const DefaultTurnTime = receiver.DefaultTurnTime

// Default terminal size of a command pane.
const (
	DefaultRows = program.DefaultRows
	DefaultCols = program.DefaultCols
)

// ErrNoPane is returned by World methods for a pane that does not exist.
var ErrNoPane = herdrstate.ErrNoPane

// DefaultWorld returns a new copy of the built-in world.
func DefaultWorld() *World { return herdrstate.DefaultWorld() }

// NewWorld builds a world from spec, on the real clock.
func NewWorld(spec WorldSpec) (*World, error) { return herdrstate.NewWorld(spec) }

// NewWorldClock builds a world from spec whose agents run on clock (the
// real clock when nil).
func NewWorldClock(spec WorldSpec, clock Clock) (*World, error) {
	return herdrstate.NewWorldClock(spec, clock)
}

// ParseWorld reads a world file.
func ParseWorld(data []byte) (*World, error) { return herdrstate.ParseWorld(data) }

// LoadWorld reads a world file from path.
func LoadWorld(path string) (*World, error) { return herdrstate.LoadWorld(path) }

// GeneratedSpec is a synthetic session for benchmarks (see
// [herdrstate.GeneratedSpec]).
func GeneratedSpec(agents, workspaces int) (WorldSpec, error) {
	return herdrstate.GeneratedSpec(agents, workspaces)
}

// GeneratedWorld builds the world of [GeneratedSpec].
func GeneratedWorld(agents, workspaces int) (*World, error) {
	return herdrstate.GeneratedWorld(agents, workspaces)
}

// SpecFromSnapshot returns the world file of a session.snapshot answer.
func SpecFromSnapshot(snap schema.SessionSnapshot) WorldSpec {
	return herdrstate.SpecFromSnapshot(snap)
}

// NewFakeClock returns a fake clock reading start.
func NewFakeClock(start time.Time) *FakeClock { return herdrstate.NewFakeClock(start) }

// EncodeNumber writes n ≥ 1 in Herdr's bijective base-32 id form.
func EncodeNumber(n uint64) string { return herdrstate.EncodeNumber(n) }

// DecodeNumber parses an id number written by EncodeNumber.
func DecodeNumber(s string) (uint64, bool) { return herdrstate.DecodeNumber(s) }

// Kinds lists the agent kinds with a behaviour of their own.
func Kinds() []string { return receiver.Kinds() }
