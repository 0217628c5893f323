//go:build unix

package herdrlink

import (
	"io"
	"os"
	"syscall"
)

// pollable returns stdin ready for Go's network poller when it is a pipe
// or a socket (what MCP hosts give their servers): in non-blocking mode,
// a read waits in the poller like the socket calls do, so a call wakes one
// thread, not a thread blocked in read(2) plus the one that runs the
// call. Terminals and regular files stay as they are. restore puts the
// descriptor back in blocking mode (the pipe may be shared with other
// processes).
func pollable(r io.Reader) (_ io.Reader, restore func()) {
	f, ok := r.(*os.File)
	if !ok {
		return r, func() {}
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return r, func() {}
	}
	fd := -1
	_ = sc.Control(func(d uintptr) { fd = int(d) })
	var st syscall.Stat_t
	if fd < 0 || syscall.Fstat(fd, &st) != nil {
		return r, func() {}
	}
	if mode := st.Mode & syscall.S_IFMT; mode != syscall.S_IFIFO && mode != syscall.S_IFSOCK {
		return r, func() {}
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return r, func() {}
	}
	// os.NewFile registers a non-blocking descriptor with the poller.
	return os.NewFile(uintptr(fd), f.Name()), func() { _ = syscall.SetNonblock(fd, false) }
}
