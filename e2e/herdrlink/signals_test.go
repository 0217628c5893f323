//go:build unix

package herdrlink

import "syscall"

// The job-control signals the stopped-holder test sends.
const (
	sigStop = syscall.SIGSTOP
	sigCont = syscall.SIGCONT
)
