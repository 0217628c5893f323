//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package outbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An owner is alive while its process holds its owner file's flock: a
// released (crashed) owner, a token whose file is gone and a file nobody
// holds are gone; Prune removes the owner files of gone processes only.
func TestOwnerAlive(t *testing.T) {
	s := open(t)
	a, b := another(t, s), another(t, s)
	ta, err := a.Token()
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.Token()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := a.Token(); again != ta {
		t.Errorf("Token changed: %s then %s", ta, again)
	}
	if !s.OwnerAlive(ta) || !s.OwnerAlive(tb) || !a.OwnerAlive(ta) {
		t.Fatal("a live owner is not alive")
	}
	a.Release() // a crash
	if s.OwnerAlive(ta) || b.OwnerAlive(ta) {
		t.Error("a released owner is alive")
	}
	if a.OwnerAlive(ta) {
		t.Error("a released owner is alive to itself")
	}
	if s.OwnerAlive("0123456789abcdef") {
		t.Error("a token whose file is gone is alive")
	}
	// A process killed without Release leaves its file, unlocked.
	stale := filepath.Join(s.Dir, "owner.fedcba9876543210")
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if s.OwnerAlive("fedcba9876543210") {
		t.Error("an unlocked owner file is alive")
	}
	s.Prune(t0)
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Prune left a gone owner's file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "owner."+tb)); err != nil {
		t.Errorf("Prune removed a live owner's file: %v", err)
	}
	if !s.OwnerAlive(tb) {
		t.Error("b not alive after Prune")
	}
	// A new token after Release: the process starts owning afresh.
	tc, err := a.Token()
	if err != nil || tc == ta || !s.OwnerAlive(tc) {
		t.Errorf("Token after Release: %q, %v", tc, err)
	}
}

// The owner file never shows under its name unlocked: a Prune running
// while another process takes its token never removes it.
func TestOwnerNeverSeenUnlocked(t *testing.T) {
	s := open(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			s.Prune(t0)
		}
	}()
	var owners []*Store
	for range 50 {
		o := another(t, s)
		if _, err := o.Token(); err != nil {
			t.Fatal(err)
		}
		owners = append(owners, o)
	}
	<-done
	for _, o := range owners {
		if _, err := os.Stat(o.ownPath); err != nil {
			t.Errorf("owner file of a live process removed: %v", err)
		}
		if !s.OwnerAlive(o.token) {
			t.Errorf("live owner %s not alive", o.token)
		}
	}
}

// Open makes a 0700 directory of this user and refuses one that another
// user could read or own, or that is not a directory.
func TestOpenDirChecks(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string)
		want    string // error substring; "" means Open succeeds
	}{
		{name: "fresh", prepare: func(*testing.T, string) {}},
		{name: "existing 0700", prepare: func(t *testing.T, dir string) { mkdir(t, dir, 0o700) }},
		{name: "mode 0755", prepare: func(t *testing.T, dir string) { mkdir(t, dir, 0o755) }, want: "want 0700"},
		{name: "mode 0710", prepare: func(t *testing.T, dir string) { mkdir(t, dir, 0o710) }, want: "want 0700"},
		{name: "mode 0701", prepare: func(t *testing.T, dir string) { mkdir(t, dir, 0o701) }, want: "want 0700"},
		{name: "a file", prepare: func(t *testing.T, dir string) {
			if err := os.WriteFile(dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, want: "not a directory"},
		{name: "a link to a private directory", prepare: func(t *testing.T, dir string) {
			target := filepath.Join(filepath.Dir(dir), "elsewhere")
			mkdir(t, target, 0o700)
			if err := os.Symlink(target, dir); err != nil {
				t.Fatal(err)
			}
		}, want: "not a directory"},
		{name: "another user's", prepare: func(t *testing.T, dir string) {
			if os.Getuid() != 0 {
				t.Skip("chown to another user needs root")
			}
			mkdir(t, dir, 0o700)
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, want: "owned by another user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, dirName("probe"))
			tt.prepare(t, dir)
			s, err := Open(base, "probe")
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				st, err := os.Lstat(s.Dir)
				if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
					t.Errorf("dir %v %v", st.Mode(), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func mkdir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

// Property: whatever the umask, nothing in the store can be read (or
// listed, or written) by group or others: the directory is 0700, every
// file in it 0600 at most, through every operation that writes.
func TestNothingReadableByOthers(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	s := open(t)
	o := another(t, s)
	ms := []Message{}
	for i := range 6 {
		st := []*Store{s, o}[i%2]
		ms = append(ms, mustAdd(t, st, msg(fmt.Sprint("m", i), "rev", "brain", "secret"), t0.Add(time.Duration(i))))
	}
	_ = s.Claim(&ms[0])
	_ = s.Unclaim(&ms[0])
	_ = s.Claim(&ms[1])
	_ = s.End(ms[1], EndMaybeDelivered, t0)
	_ = s.End(ms[2], EndCancelled, t0)
	_ = s.Claim(&ms[3])
	_ = s.Done(ms[3])
	o.Release()
	s.Prune(t0)
	checked := 0
	err := filepath.WalkDir(filepath.Dir(s.Dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if p == filepath.Dir(s.Dir) {
			return nil // the base: the lock directory's own check
		}
		checked++
		if info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v", p, info.Mode())
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			t.Errorf("%s is a link", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 6 {
		t.Errorf("only %d entries checked", checked)
	}
}
