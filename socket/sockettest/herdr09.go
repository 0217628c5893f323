package sockettest

import (
	"os"

	"github.com/herdr-link/herdr-link/socket/sockettest/herdrstate"
	"github.com/herdr-link/herdr-link/socket/sockettest/reqcheck"
)

// Herdr releases: what one release does where releases differ on the
// socket lives with the world (package herdrstate); the server reports
// the release's ping and lets its methods through the request check.

// Release is what one Herdr release does (see package herdrstate).
type Release = herdrstate.Release

// The releases the simulator knows, and the names protocol 22 adds.
const (
	Caps082                   = herdrstate.Caps082
	Caps09                    = herdrstate.Caps09
	NewestHerdr               = herdrstate.NewestHerdr
	NewestModelled            = herdrstate.NewestModelled
	ViewportRows              = herdrstate.ViewportRows
	EnvHerdrVersion           = herdrstate.EnvHerdrVersion
	MethodPaneLinkResolve     = herdrstate.MethodPaneLinkResolve
	ResultTypePaneLinkResolve = herdrstate.ResultTypePaneLinkResolve
	MaxWorldBytes             = herdrstate.MaxWorldBytes
)

// HerdrRelease returns the behaviour of Herdr version v (see
// [herdrstate.HerdrRelease]).
func HerdrRelease(v string) (Release, error) { return herdrstate.HerdrRelease(v) }

// DefaultHerdrVersion is $HERDR_SIM_VERSION, or "0.8.2".
func DefaultHerdrVersion() string { return herdrstate.DefaultHerdrVersion() }

// UseHerdr makes the server behave as Herdr version v ([HerdrRelease]):
// ping's version, protocol and capabilities, and every behaviour of that
// release. Call it before Start.
func (s *Server) UseHerdr(v string) error {
	r, err := HerdrRelease(v)
	if err != nil {
		return err
	}
	s.Protocol, s.Version, s.CapabilitiesJSON = r.Protocol, r.Version, []byte(r.Capabilities)
	s.protocol.Store(r.Protocol)
	s.World.SetRelease(r)
	s.mu.Lock()
	s.releaseMissing = nil
	if r.GraphicsRemoved {
		s.releaseMissing = GraphicsMethods
	}
	s.mu.Unlock()
	return nil
}

// Release returns the behaviour the server was given ([Server.UseHerdr]),
// or 0.8.2's when none was.
func (s *Server) Release() Release { return s.World.Release() }

// applyEnvRelease gives a new server the release $HERDR_SIM_VERSION names.
func applyEnvRelease(s *Server) {
	v := os.Getenv(EnvHerdrVersion)
	if v == "" {
		return
	}
	if err := s.UseHerdr(v); err != nil {
		panic(err.Error())
	}
}

// releaseParse gives a method the release has but protocol 20 lacks a
// second chance after the request check refused it as an unknown variant.
func (s *Server) releaseParse(line []byte, req reqcheck.Request, perr error) (reqcheck.Request, error) {
	if !s.World.Release().LinkResolve {
		return req, perr
	}
	return reqcheck.LinkResolve(line, req, perr)
}

// GraphicsMethods are the methods Herdr 0.9.2 removed ([herdrstate.Patch095]).
var GraphicsMethods = herdrstate.GraphicsMethods
