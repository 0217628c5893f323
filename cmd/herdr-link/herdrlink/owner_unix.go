//go:build unix

package herdrlink

import (
	"os"
	"syscall"
)

// fileOwner is the uid that owns fi, when the system says.
func fileOwner(fi os.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
