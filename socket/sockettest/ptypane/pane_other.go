//go:build !unix

package ptypane

import (
	"errors"

	"github.com/herdr-link/herdr-link/socket/sockettest/program"
)

// Start fails: pane commands need a Unix pseudo-terminal (Linux, macOS).
func Start(spec program.Spec, env []string) (program.Program, error) {
	return nil, errors.New("ptypane: pane commands need Linux or macOS")
}
