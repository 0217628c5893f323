package panelock

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// A full disk is reported as such (ENOSPC), not as a directory that is
// not private.
func TestLockDirFullDisk(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to mount a small file system")
	}
	r, _ := fakeRoots(t, true)
	home, _ := r.Home(r.UID)
	if err := syscall.Mount("tmpfs", home, "tmpfs", 0, "size=64k,nr_inodes=8,mode=0755"); err != nil {
		t.Skipf("no tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(home, syscall.MNT_DETACH) })
	// Use up its inodes.
	for i := 0; ; i++ {
		if err := os.WriteFile(filepath.Join(home, strconv.Itoa(i)), nil, 0o600); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	dir, err := (&Locker{Scope: "s", Roots: r}).DirPath()
	if !errors.Is(err, syscall.ENOSPC) || errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("DirPath = %s, %v; want ENOSPC, not ErrUnsafeDir", dir, err)
	}
}
