//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package panelock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The helper process: holds the lock named by PANELOCK_HELPER_DIR and
// _TERM, says "held" on stdout, then waits to be killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("PANELOCK_HELPER_DIR"); dir != "" {
		l := &Locker{Scope: "s", Dir: dir}
		if dir == "default" {
			l = &Locker{Scope: os.Getenv("PANELOCK_HELPER_SCOPE")}
		}
		lease := time.Hour
		if v := os.Getenv("PANELOCK_HELPER_LEASE"); v != "" {
			lease, _ = time.ParseDuration(v)
		}
		le, err := l.Lock(context.Background(), os.Getenv("PANELOCK_HELPER_TERM"), lease)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		if os.Getenv("PANELOCK_HELPER_BEGIN") == "first" {
			_ = le.Begin(time.Millisecond) // phase w, its deadline passed at once
			fmt.Println("writing")
			time.Sleep(time.Hour)
		}
		fmt.Println("held")
		if os.Getenv("PANELOCK_HELPER_BEGIN") == "later" {
			// Wait for a line, then try to type.
			var line string
			_, _ = fmt.Scanln(&line)
			if err := le.Begin(time.Minute); err != nil {
				fmt.Println("lost")
			} else {
				fmt.Println("typing")
			}
			le.Unlock()
			fmt.Println("released")
		}
		// Block until killed. (A bare select{} would end the process at
		// once: the runtime sees every goroutine asleep.)
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func privateDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "locks")
}

func TestMutualExclusion(t *testing.T) {
	dir := privateDir(t)
	l := &Locker{Scope: "/run/herdr.sock", Dir: dir, Poll: time.Millisecond}
	var inside, max, total atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				le, err := l.Lock(t.Context(), "term_1", time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				if n > max.Load() {
					max.Store(n)
				}
				total.Add(1)
				time.Sleep(100 * time.Microsecond)
				inside.Add(-1)
				le.Unlock()
				le.Unlock() // idempotent
			}
		}()
	}
	wg.Wait()
	if max.Load() != 1 || total.Load() != 160 {
		t.Fatalf("max holders %d, total %d", max.Load(), total.Load())
	}
	// One file for the target, left for its next delivery, released.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != l.Key("term_1") {
		t.Fatalf("lock files left: %v, want only %s", ents, l.Key("term_1"))
	}
	f, err := os.Open(filepath.Join(dir, ents[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rec, ok := readRecord(f); !ok || rec.phase != phaseRelease || rec.pid != os.Getpid() {
		t.Fatalf("line left: got %+v (read %v), want phase r of pid %d", rec, ok, os.Getpid())
	}
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode %v %v", st.Mode(), err)
	}
}

func TestOtherTargetsAndScopesDoNotBlock(t *testing.T) {
	dir := privateDir(t)
	a := &Locker{Scope: "/run/a.sock", Dir: dir}
	b := &Locker{Scope: "/run/b.sock", Dir: dir}
	u1, err := a.Lock(t.Context(), "term_1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer u1.Unlock()
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	u2, err := a.Lock(ctx, "term_2", time.Minute)
	if err != nil {
		t.Fatalf("another terminal blocked: %v", err)
	}
	u2.Unlock()
	u3, err := b.Lock(ctx, "term_1", time.Minute)
	if err != nil {
		t.Fatalf("another server blocked: %v", err)
	}
	u3.Unlock()
	if a.Key("term_1") == b.Key("term_1") || a.Key("term_1") == a.Key("term_2") {
		t.Fatal("keys collide")
	}
	// The file name reveals neither the socket path nor the terminal id.
	if k := a.Key("term_1"); strings.Contains(k, "term") || strings.Contains(k, "sock") || len(k) != 37 {
		t.Fatalf("key %q", k)
	}
}

func TestWaitIsBoundedByContext(t *testing.T) {
	l := &Locker{Scope: "s", Dir: privateDir(t)}
	le, err := l.Lock(t.Context(), "t", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer le.Unlock()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := l.Lock(ctx, "t", time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("waited %v", el)
	}
}

// Another process holds the lock; once it is killed (no clean-up at all)
// the lock is free.
func TestCrashedHolderNeverBlocks(t *testing.T) {
	dir := privateDir(t)
	if err := ensureLeaf(dir, os.Getuid()); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PANELOCK_HELPER_DIR="+dir, "PANELOCK_HELPER_TERM=term_x")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "held\n" {
		t.Fatalf("helper: %q", line)
	}
	l := &Locker{Scope: "s", Dir: dir, Poll: time.Millisecond}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	if _, err := l.Lock(ctx, "term_x", time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lock held by another process was taken: %v", err)
	}
	cancel()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	ctx, cancel = context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	le, err := l.Lock(ctx, "term_x", time.Minute)
	if err != nil {
		t.Fatalf("lock of a killed holder: %v", err)
	}
	le.Unlock()
}

func TestUnsafeDirectories(t *testing.T) {
	base := t.TempDir()
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	private := filepath.Join(base, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{open, link, file} {
		l := &Locker{Scope: "s", Dir: dir}
		if _, err := l.Lock(t.Context(), "t", time.Minute); !errors.Is(err, ErrUnsafeDir) {
			t.Errorf("%s: err = %v, want ErrUnsafeDir", filepath.Base(dir), err)
		}
	}
	// A symbolic link in place of a lock file is refused, not followed.
	l := &Locker{Scope: "s", Dir: private}
	target := filepath.Join(base, "elsewhere")
	if err := os.Symlink(target, filepath.Join(private, l.Key("t"))); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Lock(t.Context(), "t", time.Minute); err == nil {
		t.Fatal("lock through a symbolic link")
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the link was followed: %v", err)
	}
}

// Two processes whose environments differ in XDG_RUNTIME_DIR and TMPDIR
// (a Codex-hosted and a Claude-hosted herdr-link) share one lock.
func TestEnvironmentDoesNotMoveTheLock(t *testing.T) {
	scope := filepath.Join(t.TempDir(), "herdr.sock") // unique on the machine
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PANELOCK_HELPER_DIR=default", "PANELOCK_HELPER_SCOPE="+scope,
		"PANELOCK_HELPER_TERM=term_env", "XDG_RUNTIME_DIR="+t.TempDir(), "TMPDIR="+t.TempDir())
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "held\n" {
		t.Fatalf("helper: %q", line)
	}
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	t.Setenv("TMPDIR", t.TempDir())
	l := &Locker{Scope: scope, Poll: time.Millisecond}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if le, err := l.Lock(ctx, "term_env", time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		if err == nil {
			le.Unlock()
		}
		t.Fatalf("a process with another environment took a held lock: %v", err)
	}
}

// Every spelling of one socket path, a symbolic link included, is one
// lock; another socket is another.
func TestScopeSpellings(t *testing.T) {
	base := t.TempDir()
	sock := filepath.Join(base, "x.sock")
	if err := os.WriteFile(sock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(base, "y.sock")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link.sock")
	if err := os.Symlink(sock, link); err != nil {
		t.Fatal(err)
	}
	key := (&Locker{Scope: sock}).Key("t")
	for _, p := range []string{base + "//x.sock", base + "/./x.sock", link, filepath.Join(base, "sub", "..", "x.sock")} {
		if k := (&Locker{Scope: p}).Key("t"); k != key {
			t.Errorf("%s: key %s, want %s", p, k, key)
		}
	}
	if (&Locker{Scope: other}).Key("t") == key {
		t.Error("another socket, the same key")
	}
	// A path that cannot be stat'ed is cleaned.
	if a, b := (&Locker{Scope: "/run/x.sock"}).Key("t"), (&Locker{Scope: "/run//x.sock"}).Key("t"); a != b {
		t.Error("/run/x.sock and /run//x.sock differ")
	}
}
