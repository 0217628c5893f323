//go:build !unix

package sockettest

import (
	"errors"
	"os"
)

func inode(os.FileInfo) uint64 { return 0 }

func readFD(uintptr, []byte) (int, error) {
	return 0, errors.New("sockettest: the poll-read mode needs a Unix system")
}
