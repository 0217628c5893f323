// Package sibling finds the project's other binaries for the commands that
// run them (herdr-bench runs herdr-link and herdr-sim; herdr-sim demo runs
// herdr-link): the path a flag gives, else beside the running binary (how
// 'just build' and the release archives lay them out), else on PATH.
package sibling

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Find returns the binary flagValue names (a path, or a name on PATH) if
// set, else name beside this binary, else name on PATH; flagName is the
// flag that names it, for the error.
func Find(name, flagName, flagValue string) (string, error) {
	if flagValue != "" {
		if !strings.ContainsRune(flagValue, os.PathSeparator) {
			return exec.LookPath(flagValue)
		}
		p, err := filepath.Abs(flagValue)
		if err != nil {
			return "", err
		}
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			return "", fmt.Errorf("-%s %s: not a file", flagName, flagValue)
		}
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", errors.New("no " + name + " beside this binary or on PATH: build all three (just build, or go build -o bin/ ./cmd/...), or name it with -" + flagName)
}
