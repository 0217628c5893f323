//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package panelock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// SystemRoots are the real places: this process's user id, /run/user, the
// home directory of the user database entry, /tmp.
func SystemRoots() *Roots {
	return &Roots{UID: os.Getuid(), Run: "/run/user", Home: passwdHome, Tmp: "/tmp"}
}

// passwdHome is the home directory of uid's user database entry.
func passwdHome(uid int) (string, error) {
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return "", err
	}
	return u.HomeDir, nil
}

func (l *Locker) roots() *Roots {
	if l.Roots != nil {
		return l.Roots
	}
	return SystemRoots()
}

// DirPath returns the lock directory, creating it when needed, or an error
// wrapping [ErrUnsafeDir]. The rule depends on the user id and the file
// system only, so every process of the user finds the same directory:
//
//  1. <Run>/<uid>/herdr-link when <Run>/<uid> (/run/user/<uid>) is a
//     directory of the user with mode 0700, not a symbolic link;
//  2. else <home>/.local/state/herdr-link, home taken from the user
//     database (never $HOME), when the user has an existing home;
//  3. else (no home entry, or no such directory) <Tmp>/herdr-link-<uid>.
//
// Once a rule applies, its directory is used or nothing is: a directory
// another user could have pre-empted (every component must be owned by
// root or the user and writable by nobody else, a sticky parent such as
// /tmp excepted; the directory must be the user's, 0700, not a link) is
// an error, never a reason to try the next rule.
//
// A Locker makes these checks once: later calls only look at the
// directory itself (one lstat), which must still be the same directory,
// the user's, mode 0700; anything else (removed, replaced, a link, its
// mode changed) makes the full checks run again. A component above it
// made unsafe after that first call is noticed by the next process.
func (l *Locker) DirPath() (string, error) {
	c := &l.dir
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.st != nil {
		if st, err := os.Lstat(c.path); err == nil && os.SameFile(st, c.st) && leafErr(c.path, st, c.uid) == nil {
			return c.path, nil
		}
		c.st = nil
	}
	dir, uid, err := l.checkDir()
	if err != nil {
		return dir, err
	}
	if st, err := os.Lstat(dir); err == nil && leafErr(dir, st, uid) == nil {
		c.path, c.uid, c.st = dir, uid, st
	}
	return dir, nil
}

// dirCache is the lock directory a Locker checked, and what lstat said
// of it then.
type dirCache struct {
	mu   sync.Mutex
	path string
	uid  int
	st   fs.FileInfo
}

// checkDir applies the rule of [Locker.DirPath] with every check; it
// returns the directory and the user it must belong to.
func (l *Locker) checkDir() (string, int, error) {
	if l.Dir != "" {
		return l.Dir, os.Getuid(), ensureLeaf(l.Dir, os.Getuid())
	}
	r := l.roots()
	uid := strconv.Itoa(r.UID)
	if run := filepath.Join(r.Run, uid); privateRuntime(run, r.UID) {
		dir := filepath.Join(run, "herdr-link")
		return dir, r.UID, ensureLeaf(dir, r.UID)
	}
	if home, ok := homeOf(r); ok {
		dir, err := homeDir(home, r.UID)
		return dir, r.UID, err
	}
	dir := filepath.Join(r.Tmp, "herdr-link-"+uid)
	return dir, r.UID, ensureLeaf(dir, r.UID)
}

// privateRuntime reports whether run is a directory of uid (not a link),
// mode 0700, under components nobody else can write.
func privateRuntime(run string, uid int) bool {
	st, err := os.Lstat(run)
	if err != nil || !st.IsDir() || owner(st) != uid || st.Mode().Perm()&0o077 != 0 {
		return false
	}
	return checkChain(filepath.Dir(run), uid) == nil
}

// homeOf returns the user's home from the user database when it names an
// existing directory.
func homeOf(r *Roots) (string, bool) {
	if r.Home == nil {
		return "", false
	}
	home, err := r.Home(r.UID)
	if err != nil || !filepath.IsAbs(home) || filepath.Clean(home) == "/" {
		return "", false
	}
	st, err := os.Stat(home)
	return home, err == nil && st.IsDir()
}

// homeDir makes and checks <home>/.local/state/herdr-link. Each
// component is created only under a parent already checked: the user may
// have made ~/.local or ~/.local/state a link, which is followed and
// checked (and that path used from there on) before anything is created
// in it.
func homeDir(home string, uid int) (string, error) {
	if err := checkChain(home, uid); err != nil {
		return "", err
	}
	parent := home
	for _, name := range []string{".local", "state"} {
		d := filepath.Join(parent, name)
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", createErr(d, err)
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrUnsafeDir, err)
		}
		if err := checkChain(real, uid); err != nil {
			return "", err
		}
		parent = real
	}
	dir := filepath.Join(parent, "herdr-link")
	return dir, ensureLeaf(dir, uid)
}

// createErr is the error of creating directory d: [ErrUnsafeDir] when
// permission was refused (someone else's directory is in the way); the
// system's error itself otherwise (a full disk, a read-only file system),
// which says what the operator must fix.
func createErr(d string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w: create %s: %v", ErrUnsafeDir, d, err)
	}
	return fmt.Errorf("panelock: create %s: %w", d, err)
}

// checkChain checks every component of the directory dir, from the root
// down: a directory, not a link, owned by root or uid, and writable by
// group or others only when sticky (as /tmp is: others cannot replace
// what is in it).
func checkChain(dir string, uid int) error {
	dir = filepath.Clean(dir)
	if !filepath.IsAbs(dir) {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrUnsafeDir, err)
		}
		dir = abs
	}
	for p := dir; ; p = filepath.Dir(p) {
		st, err := os.Lstat(p)
		switch {
		case err != nil:
			return fmt.Errorf("%w: %v", ErrUnsafeDir, err)
		case !st.IsDir():
			return fmt.Errorf("%w: %s is not a directory", ErrUnsafeDir, p)
		case owner(st) != 0 && owner(st) != uid:
			return fmt.Errorf("%w: %s is owned by another user", ErrUnsafeDir, p)
		case st.Mode().Perm()&0o022 != 0 && st.Mode()&fs.ModeSticky == 0:
			return fmt.Errorf("%w: %s is writable by other users", ErrUnsafeDir, p)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// ensureLeaf creates dir 0700 if needed and checks that it is a directory
// (not a link) owned by uid with no group or other permissions, under
// components nobody else can write.
func ensureLeaf(dir string, uid int) error {
	if err := checkChain(filepath.Dir(dir), uid); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return createErr(dir, err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnsafeDir, err)
	}
	return leafErr(dir, st, uid)
}

// leafErr checks what lstat said of the lock directory: a directory (not
// a link) of uid with no group or other permissions.
func leafErr(dir string, st fs.FileInfo, uid int) error {
	switch {
	case !st.IsDir():
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafeDir, dir)
	case owner(st) != uid:
		return fmt.Errorf("%w: %s is owned by another user", ErrUnsafeDir, dir)
	case st.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%w: %s has mode %v, want 0700", ErrUnsafeDir, dir, st.Mode().Perm())
	}
	return nil
}

func owner(st fs.FileInfo) int {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid)
	}
	return -1
}

// scopeID identifies the socket at path: its device, inode and
// modification time (set when the socket was bound) when it can be
// stat'ed (symbolic links followed), else the cleaned path. The time
// tells a new socket that got the inode of a removed one (a Herdr
// restarted, another server in its place) from the one it replaced: the
// outbox kept beside the locks must not hand one server's messages to
// the next.
func scopeID(path string) string {
	if st, err := os.Stat(path); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			return fmt.Sprintf("inode:%d:%d:%d", uint64(sys.Dev), uint64(sys.Ino), st.ModTime().UnixNano())
		}
	}
	return "path:" + filepath.Clean(path)
}
