//go:build !unix

package ptypane

import (
	"errors"

	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// Start fails: pane commands need a Unix pseudo-terminal (Linux, macOS).
func Start(spec sockettest.CommandSpec, env []string) (sockettest.Program, error) {
	return nil, errors.New("ptypane: pane commands need Linux or macOS")
}

// Option makes a server run pane commands (where supported).
func Option(s *sockettest.Server) { s.Programs = Start }
