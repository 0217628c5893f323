//go:build linux

package panelock

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// fOFDSetLK is F_OFD_SETLK: a lock owned by the open file description, so
// independent of flock and of other descriptors of this process.
const fOFDSetLK = 37

// guard takes an exclusive open-file-description lock on byte 1 of f's
// file (flock, which marks the holder, is independent of it), trying
// tries times 1 ms apart. Removing a lock file that may be held, and the
// last check before typing, happen under it.
func guard(f *os.File, tries int) (func(), bool) {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 1, Len: 1}
	for i := 0; ; i++ {
		err := syscall.FcntlFlock(f.Fd(), fOFDSetLK, &lk)
		if err == nil {
			break
		}
		if err == syscall.EINVAL {
			return func() {}, true // a kernel before 3.15: no breaking either
		}
		if i+1 >= tries {
			return nil, false
		}
		time.Sleep(time.Millisecond)
	}
	return func() {
		un := syscall.Flock_t{Type: syscall.F_UNLCK, Whence: 0, Start: 1, Len: 1}
		_ = syscall.FcntlFlock(f.Fd(), fOFDSetLK, &un)
	}, true
}

// breakStopped removes path, whose lock f another process holds, when
// the holder's lease allows it: a lease line, not in phase w or r, past
// its deadline, and a holder that has f's file open with every thread
// stopped. It reports whether it removed the file.
func breakStopped(f *os.File, path string) bool {
	rec, ok := readRecord(f)
	if !ok || rec.phase == phaseWriting || rec.phase == phaseRelease || time.Now().UnixNano() < rec.until || rec.pid == os.Getpid() {
		return false
	}
	if !stopped(rec.pid) || !hasOpen(rec.pid, f) {
		return false
	}
	release, ok := guard(f, 1)
	if !ok {
		return false
	}
	defer release()
	// Under the guard: the holder cannot pass Begin's check until this
	// is done, and a w written since is honoured.
	if now, ok := readRecord(f); !ok || now != rec || !samePath(f, path) {
		return false
	}
	return os.Remove(path) == nil
}

// stopped reports whether every thread of pid is stopped (by a signal or
// a debugger).
func stopped(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	names, err := d.Readdirnames(4096)
	d.Close()
	if err != nil || len(names) == 0 {
		return false
	}
	for _, tid := range names {
		b, err := os.ReadFile(dir + "/" + tid + "/stat")
		if err != nil {
			return false
		}
		// pid (comm) S …: the state follows the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) || (s[i+2] != 'T' && s[i+2] != 't') {
			return false
		}
	}
	return true
}

// hasOpen reports whether pid has f's file open: the lease line names
// this holder, not a reused pid or one of another pid namespace.
func hasOpen(pid int, f *os.File) bool {
	want, err := f.Stat()
	if err != nil {
		return false
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer d.Close()
	names, _ := d.Readdirnames(65536)
	for _, n := range names {
		if st, err := os.Stat(dir + "/" + n); err == nil && os.SameFile(st, want) {
			return true
		}
	}
	return false
}
