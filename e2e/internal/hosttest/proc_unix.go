//go:build unix

package hosttest

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so everything it
// spawns can be killed together.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the process group led by pid.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// killPID kills one process.
func killPID(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
