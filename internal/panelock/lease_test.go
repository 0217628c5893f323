//go:build linux

package panelock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

type helper struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startHelper runs the helper process of TestMain holding the lock of
// term_s in dir with the given lease, and waits for its first line.
func startHelper(t *testing.T, dir, lease, begin, want string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PANELOCK_HELPER_DIR="+dir, "PANELOCK_HELPER_TERM=term_s",
		"PANELOCK_HELPER_LEASE="+lease, "PANELOCK_HELPER_BEGIN="+begin)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	h := &helper{cmd: cmd, in: in, out: bufio.NewReader(out)}
	if line := h.line(t); line != want {
		t.Fatalf("helper: %q, want %q", line, want)
	}
	return h
}

func (h *helper) line(t *testing.T) string {
	t.Helper()
	s, err := h.out.ReadString('\n')
	if err != nil {
		t.Fatalf("helper output: %v", err)
	}
	return strings.TrimSpace(s)
}

func (h *helper) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := h.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if sig == syscall.SIGSTOP {
		// The stop is asynchronous: wait until every thread is stopped.
		for deadline := time.Now().Add(5 * time.Second); !stopped(h.cmd.Process.Pid); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("helper not stopped")
			}
		}
	}
}

func tryLock(l *Locker, d time.Duration) (*Lease, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return l.Lock(ctx, "term_s", time.Minute)
}

// A holder stopped past its lease loses the lock to a waiter; when it
// wakes up it finds out before typing, does not type, and its release
// leaves the new holder's lock alone.
func TestStoppedHolderLosesItsLease(t *testing.T) {
	dir := privateDir(t)
	if err := ensureLeaf(dir, os.Getuid()); err != nil {
		t.Fatal(err)
	}
	h := startHelper(t, dir, "300ms", "later", "held")
	h.signal(t, syscall.SIGSTOP)
	if _, err := io.WriteString(h.in, "go\n"); err != nil { // read once it runs again
		t.Fatal(err)
	}
	l := &Locker{Scope: "s", Dir: dir, Poll: time.Millisecond}
	start := time.Now()
	le, err := tryLock(l, 5*time.Second)
	if err != nil {
		t.Fatalf("lock of a stopped holder past its lease: %v", err)
	}
	if el := time.Since(start); el < 200*time.Millisecond {
		t.Fatalf("lease broken after %v, before its deadline", el)
	}
	h.signal(t, syscall.SIGCONT)
	if line := h.line(t); line != "lost" {
		t.Fatalf("the woken holder: %q, want lost", line)
	}
	if line := h.line(t); line != "released" {
		t.Fatalf("the woken holder: %q", line)
	}
	// Still ours: the old holder's release did not remove our file.
	if _, err := tryLock(l, 100*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second holder at once: %v", err)
	}
	if err := le.Begin(time.Minute); err != nil {
		t.Fatalf("the new holder's Begin: %v", err)
	}
	le.Unlock()
	if _, err := tryLock(l, time.Second); err != nil {
		t.Fatal(err)
	}
}

// Never broken: a stopped holder within its lease, a running holder past
// it, a stopped holder that was about to type (phase w), and a file whose
// line is a release (its new holder has not written its own yet).
func TestLeaseNotBroken(t *testing.T) {
	for _, tc := range []struct {
		name, lease, begin, first string
		stop                      bool
		// release: the file's line is then a past release of the stopped
		// holder, as a new holder finds it before writing its own.
		release bool
	}{
		{"stopped within the lease", "1h", "", "held", true, false},
		{"running past the lease", "1ms", "", "held", false, false},
		{"stopped while typing", "1ms", "first", "writing", true, false},
		{"stopped, a release line", "1ms", "", "held", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := privateDir(t)
			if err := ensureLeaf(dir, os.Getuid()); err != nil {
				t.Fatal(err)
			}
			h := startHelper(t, dir, tc.lease, tc.begin, tc.first)
			if tc.stop {
				h.signal(t, syscall.SIGSTOP)
			}
			if tc.release {
				line := fmt.Sprintf("hl-lease/1 %010d r %019d\n", h.cmd.Process.Pid, time.Now().Add(-time.Hour).UnixNano())
				if err := os.WriteFile(filepath.Join(dir, (&Locker{Scope: "s"}).Key("term_s")), []byte(line), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(20 * time.Millisecond) // past a 1 ms lease
			l := &Locker{Scope: "s", Dir: dir, Poll: time.Millisecond}
			if le, err := tryLock(l, 300*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
				if err == nil {
					le.Unlock()
				}
				t.Fatalf("err = %v, want the wait's deadline", err)
			}
		})
	}
}

// Lock files left by killed holders, and files released over
// keepReleased ago, are removed, a few per sweep; a file that is held, or
// was released lately, never is.
func TestSweepsFilesOfKilledHolders(t *testing.T) {
	dir := privateDir(t)
	if err := ensureLeaf(dir, os.Getuid()); err != nil {
		t.Fatal(err)
	}
	l := &Locker{Scope: "s", Dir: dir}
	for i := 0; i < 10; i++ {
		if err := os.WriteFile(filepath.Join(dir, l.Key("dead"+string(rune('a'+i)))), []byte("hl-lease/1 0000000001 d 0000000000000000001\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	released := func(at time.Time) []byte {
		return []byte(fmt.Sprintf("hl-lease/1 0000000001 r %019d\n", at.UnixNano()))
	}
	if err := os.WriteFile(filepath.Join(dir, l.Key("gone")), released(time.Now().Add(-keepReleased-time.Minute)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, l.Key("lately")), released(time.Now().Add(-keepReleased+time.Minute)), 0o600); err != nil {
		t.Fatal(err)
	}
	held, err := l.Lock(t.Context(), "live", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4*sweepEvery; i++ {
		le, err := l.Lock(t.Context(), "other", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		le.Unlock()
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{l.Key("live"), l.Key("lately"), l.Key("other"), "notes.txt"}
	if len(names) != len(want) || !contains(names, want[0]) || !contains(names, want[1]) || !contains(names, want[2]) {
		t.Fatalf("left: %v, want %v (held, released lately, released just now, not a lock)", names, want)
	}
	if !samePath(held.f, held.path) {
		t.Fatal("the held file was replaced")
	}
}

// The sweep runs on a Locker's first acquisition and then on every
// sweepEvery-th, not on each: a file left by a killed holder stays until
// the next one.
func TestSweepsOnEverySweepEveryThAcquisition(t *testing.T) {
	dir := privateDir(t)
	if err := ensureLeaf(dir, os.Getuid()); err != nil {
		t.Fatal(err)
	}
	l := &Locker{Scope: "s", Dir: dir}
	dead := filepath.Join(dir, l.Key("dead"))
	exists := func() bool { _, err := os.Lstat(dead); return err == nil }
	for i := 1; i <= sweepEvery+1; i++ {
		if i == 2 {
			if err := os.WriteFile(dead, []byte("hl-lease/1 0000000001 d 0000000000000000001\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		le, err := l.Lock(t.Context(), "other", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		le.Unlock()
		if got, want := exists(), i > 1 && i <= sweepEvery; got != want {
			t.Fatalf("after acquisition %d: dead file left = %v, want %v", i, got, want)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Several waiters on a stopped holder: one breaks its lease, and the
// others, still waiting on the old file, move to the new one and get the
// lock in turn, one at a time.
func TestWaitersOfABrokenLeaseMoveOn(t *testing.T) {
	dir := privateDir(t)
	if err := ensureLeaf(dir, os.Getuid()); err != nil {
		t.Fatal(err)
	}
	h := startHelper(t, dir, "200ms", "", "held")
	h.signal(t, syscall.SIGSTOP)
	l := &Locker{Scope: "s", Dir: dir, Poll: time.Millisecond}
	var inside, most, got atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			le, err := tryLock(l, 5*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			if n := inside.Add(1); n > most.Load() {
				most.Store(n)
			}
			got.Add(1)
			time.Sleep(50 * time.Millisecond)
			inside.Add(-1)
			le.Unlock()
		}()
	}
	wg.Wait()
	if got.Load() != 4 || most.Load() != 1 {
		t.Fatalf("%d of 4 waiters got the lock, at most %d at once", got.Load(), most.Load())
	}
}

// A release leaves the file, its line marked released by this process at
// the time of the release; the next lock takes the same file instead of
// creating one.
func TestReleaseKeepsTheFile(t *testing.T) {
	dir := privateDir(t)
	l := &Locker{Scope: "s", Dir: dir}
	le, err := l.Lock(t.Context(), "t", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Lstat(le.path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	le.Unlock()
	f, err := os.Open(le.path)
	if err != nil {
		t.Fatalf("after the release: got %v, want the file kept", err)
	}
	rec, ok := readRecord(f)
	f.Close()
	if got, want := rec, (record{pid: os.Getpid(), phase: phaseRelease}); !ok || got.pid != want.pid || got.phase != want.phase ||
		got.until < start.UnixNano() || got.until > time.Now().UnixNano() {
		t.Fatalf("line after the release: %+v (%v), want %+v with the release's time", got, ok, want)
	}
	le2, err := l.Lock(t.Context(), "t", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer le2.Unlock()
	after, err := os.Lstat(le2.path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := after.Sys().(*syscall.Stat_t).Ino, before.Sys().(*syscall.Stat_t).Ino; got != want {
		t.Fatalf("the next lock's file: inode %d, want %d (the kept one)", got, want)
	}
}
