//go:build unix

package sockettest

import (
	"os"
	"syscall"
)

// inode is the file's inode number, or 0 when the system does not say.
func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// readFD is one read(2) on a descriptor the runtime put in non-blocking mode.
func readFD(fd uintptr, b []byte) (int, error) { return syscall.Read(int(fd), b) }
