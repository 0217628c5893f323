//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package panelock

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// fakeRoots makes run, home and tmp roots under a temporary directory;
// prep changes them before the lock directory is looked for.
func fakeRoots(t testing.TB, withHome bool) (*Roots, string) {
	t.Helper()
	base := t.TempDir()
	r := &Roots{UID: os.Getuid(), Run: filepath.Join(base, "run"), Tmp: filepath.Join(base, "tmp")}
	for _, d := range []string{r.Run, r.Tmp, filepath.Join(base, "home", "u")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(r.Tmp, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home", "u")
	r.Home = func(uid int) (string, error) {
		if !withHome || uid != os.Getuid() {
			return "", errors.New("no such user")
		}
		return home, nil
	}
	return r, base
}

const otherUID = 65534

// chownOther gives p to another user; only root can.
func chownOther(t *testing.T, p string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	if err := os.Lchown(p, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// The lock directory's rule: /run/user/<uid> when private, else the home
// of the user database, else /tmp; a pre-empted directory fails closed,
// never a reason to use another one.
//
// Long: one table of file-system states, each a few lines of set-up.
func TestLockDirRule(t *testing.T) {
	uid := strconv.Itoa(os.Getuid())
	tmpDir := func(r *Roots) string { return filepath.Join(r.Tmp, "herdr-link-"+uid) }
	for _, tc := range []struct {
		name     string
		withHome bool
		prep     func(t *testing.T, r *Roots, home string)
		// want is the directory relative to the roots' base, "" for
		// ErrUnsafeDir.
		want string
	}{
		{"private run dir", true, func(t *testing.T, r *Roots, _ string) { mkdir(t, filepath.Join(r.Run, uid), 0o700) }, "run/" + uid + "/herdr-link"},
		{"no run dir: home", true, nil, "home/u/.local/state/herdr-link"},
		{"run dir 0755: home", true, func(t *testing.T, r *Roots, _ string) { mkdir(t, filepath.Join(r.Run, uid), 0o755) }, "home/u/.local/state/herdr-link"},
		{"run dir of another user: home", true, func(t *testing.T, r *Roots, _ string) {
			mkdir(t, filepath.Join(r.Run, uid), 0o700)
			chownOther(t, filepath.Join(r.Run, uid))
		}, "home/u/.local/state/herdr-link"},
		{"run dir a link: home", true, func(t *testing.T, r *Roots, home string) {
			mkdir(t, filepath.Join(home, "elsewhere"), 0o700)
			if err := os.Symlink(filepath.Join(home, "elsewhere"), filepath.Join(r.Run, uid)); err != nil {
				t.Fatal(err)
			}
		}, "home/u/.local/state/herdr-link"},
		{"tmp pre-empted, home used", true, func(t *testing.T, r *Roots, _ string) { mkdir(t, tmpDir(r), 0o777) }, "home/u/.local/state/herdr-link"},
		{"home's .local a link of the user", true, func(t *testing.T, r *Roots, home string) {
			mkdir(t, filepath.Join(home, "dot-local", "state"), 0o755)
			if err := os.Symlink(filepath.Join(home, "dot-local"), filepath.Join(home, ".local")); err != nil {
				t.Fatal(err)
			}
		}, "home/u/dot-local/state/herdr-link"},
		{"home writable by others", true, func(t *testing.T, _ *Roots, home string) { mkdir(t, home, 0o777) }, ""},
		{"home's lock dir pre-created 0755", true, func(t *testing.T, _ *Roots, home string) {
			mkdir(t, filepath.Join(home, ".local", "state", "herdr-link"), 0o755)
		}, ""},
		{"home's lock dir of another user", true, func(t *testing.T, _ *Roots, home string) {
			mkdir(t, filepath.Join(home, ".local", "state", "herdr-link"), 0o700)
			chownOther(t, filepath.Join(home, ".local", "state", "herdr-link"))
		}, ""},
		{"no home: tmp", false, nil, "tmp/herdr-link-" + uid},
		{"no home, tmp dir of another user", false, func(t *testing.T, r *Roots, _ string) {
			mkdir(t, tmpDir(r), 0o700)
			chownOther(t, tmpDir(r))
		}, ""},
		{"no home, tmp dir 0777", false, func(t *testing.T, r *Roots, _ string) { mkdir(t, tmpDir(r), 0o777) }, ""},
		{"no home, tmp dir a link", false, func(t *testing.T, r *Roots, _ string) {
			priv := filepath.Join(r.Tmp, "priv")
			mkdir(t, priv, 0o700)
			if err := os.Symlink(priv, tmpDir(r)); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"no home, tmp a plain file", false, func(t *testing.T, r *Roots, _ string) {
			if err := os.WriteFile(tmpDir(r), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"no home, tmp not sticky", false, func(t *testing.T, r *Roots, _ string) { mkdir(t, r.Tmp, 0o777) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, base := fakeRoots(t, tc.withHome)
			home, _ := r.Home(r.UID)
			if tc.prep != nil {
				tc.prep(t, r, home)
			}
			// Nothing in the environment moves it.
			t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
			t.Setenv("HOME", t.TempDir())
			t.Setenv("TMPDIR", t.TempDir())
			l := &Locker{Scope: "s", Roots: r}
			dir, err := l.DirPath()
			le, lerr := l.Lock(t.Context(), "t", time.Minute)
			if tc.want == "" {
				if !errors.Is(err, ErrUnsafeDir) || !errors.Is(lerr, ErrUnsafeDir) {
					t.Fatalf("DirPath = %s, %v; Lock: %v; want ErrUnsafeDir", dir, err, lerr)
				}
				return
			}
			if err != nil || lerr != nil {
				t.Fatalf("DirPath = %s, %v; Lock: %v", dir, err, lerr)
			}
			defer le.Unlock()
			if want := filepath.Join(base, tc.want); dir != want {
				t.Fatalf("DirPath = %s, want %s", dir, want)
			}
			if st, err := os.Lstat(dir); err != nil || st.Mode().Perm() != 0o700 || !st.IsDir() {
				t.Fatalf("%s: %v %v", dir, st.Mode(), err)
			}
			if filepath.Dir(le.path) != dir {
				t.Fatalf("lock file %s not in %s", le.path, dir)
			}
		})
	}
}

// A ~/.local the user made a link into another user's world-writable
// directory is refused before anything is created there: no "state" is
// left in the other user's directory.
func TestLockDirCreatesNothingThroughAnUncheckedLink(t *testing.T) {
	for _, mode := range []os.FileMode{0o777, 0o777 | os.ModeSticky} {
		t.Run(mode.String(), func(t *testing.T) {
			r, base := fakeRoots(t, true)
			home, _ := r.Home(r.UID)
			theirs := filepath.Join(base, "theirs")
			mkdir(t, theirs, 0o700)
			chownOther(t, theirs)
			if err := os.Chmod(theirs, mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(theirs, filepath.Join(home, ".local")); err != nil {
				t.Fatal(err)
			}
			dir, err := (&Locker{Scope: "s", Roots: r}).DirPath()
			if !errors.Is(err, ErrUnsafeDir) {
				t.Fatalf("DirPath = %s, %v; want ErrUnsafeDir", dir, err)
			}
			if ents, _ := os.ReadDir(theirs); len(ents) != 0 {
				t.Errorf("created in the other user's directory: %v", ents)
			}
		})
	}
}

// A Locker checks its lock directory's path once: later locks look only
// at the directory itself, and anything changed there (removed, replaced,
// its mode, a link in its place) runs every check again, which refuses an
// unsafe directory as the first time.
func TestLockDirCheckedOncePerLocker(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		// wantLooks is how many times the user database was asked over
		// the three locks; wantUnsafe whether the third lock fails.
		wantLooks  int
		wantUnsafe bool
	}{
		{"unchanged", nil, 1, false},
		{"removed", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}, 2, false},
		{"replaced by another private directory", func(t *testing.T, dir string) {
			if err := os.Rename(dir, dir+".old"); err != nil {
				t.Fatal(err)
			}
			mkdir(t, dir, 0o700)
		}, 2, false},
		{"mode 0755", func(t *testing.T, dir string) {
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}, 2, true},
		{"a link in its place", func(t *testing.T, dir string) {
			if err := os.Rename(dir, dir+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(dir+".old", dir); err != nil {
				t.Fatal(err)
			}
		}, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := fakeRoots(t, true)
			home := r.Home
			looks := 0
			r.Home = func(uid int) (string, error) { looks++; return home(uid) }
			l := &Locker{Scope: "s", Roots: r}
			lock := func() error {
				le, err := l.Lock(t.Context(), "t", time.Minute)
				if err == nil {
					le.Unlock()
				}
				return err
			}
			if err := lock(); err != nil {
				t.Fatal(err)
			}
			if err := lock(); err != nil {
				t.Fatal(err)
			}
			dir, _ := l.DirPath()
			if tc.change != nil {
				tc.change(t, dir)
			}
			err := lock()
			if got := errors.Is(err, ErrUnsafeDir); got != tc.wantUnsafe || (err != nil && !got) {
				t.Fatalf("third lock: got %v, want ErrUnsafeDir %v", err, tc.wantUnsafe)
			}
			if looks != tc.wantLooks {
				t.Fatalf("user database asked: got %d times, want %d", looks, tc.wantLooks)
			}
		})
	}
}
