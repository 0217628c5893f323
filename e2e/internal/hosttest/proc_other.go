//go:build !unix

package hosttest

import (
	"os"
	"os/exec"
)

// The host runner targets Unix (the hosts' headless modes, herdr-sim's
// socket); elsewhere it only needs to build.

func ownGroup(cmd *exec.Cmd) {}

func killGroup(pid int) { _ = killPID(pid) }

func killPID(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
