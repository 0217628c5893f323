// Package bins builds the project's binaries once for all the end-to-end
// tests of a run: herdr-link, herdr-sim and herdr-bench from the root
// module, into one directory keyed by a hash of the root module's files.
// Each e2e package's TestMain asks for it; the first builds (under a file
// lock, so parallel test processes wait for it instead of building too),
// the others find the binaries there. A change to any file of the product
// gives a new key, so a stale binary is never used.
//
// HERDR_LINK_E2E_BIN names a directory that already holds the three
// binaries (scripts/hosts.sh and CI build them once into it); nothing is
// built then.
package bins

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Names are the commands built, each a directory under the root's cmd/.
var Names = [...]string{"herdr-link", "herdr-sim", "herdr-bench", "herdr-board"}

// EnvDir is the environment variable naming a prebuilt directory.
const EnvDir = "HERDR_LINK_E2E_BIN"

// Dir returns the directory holding the binaries, building them if needed
// (once per test process; once per source state across processes).
func Dir() (string, error) { return dirOnce() }

var dirOnce = sync.OnceValues(dir)

func dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		d, err := filepath.Abs(d)
		if err != nil {
			return "", err
		}
		for _, n := range Names {
			if _, err := os.Stat(filepath.Join(d, n)); err != nil {
				return "", fmt.Errorf("%s=%s: %w", EnvDir, d, err)
			}
		}
		return d, nil
	}
	root, err := Root()
	if err != nil {
		return "", err
	}
	key, err := sourceKey(root)
	if err != nil {
		return "", err
	}
	base := filepath.Join(os.TempDir(), "herdr-link-e2e-bins")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	dir := filepath.Join(base, key)
	unlock, err := lock(dir + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, nil
	}
	if err := build(root, dir); err != nil {
		return "", err
	}
	prune(base, key)
	return dir, nil
}

// Path returns the path of the binary name, building them all if needed.
func Path(name string) (string, error) {
	d, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, name), nil
}

// Root is the root module's directory, as the go command resolves it
// (the e2e module's replace directive points at it).
func Root() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/herdr-link/herdr-link").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m github.com/herdr-link/herdr-link: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func build(root, dir string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "building-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	args := []string{"build", "-o", tmp + string(os.PathSeparator)}
	for _, n := range Names {
		args = append(args, "./cmd/"+n)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %v: %v\n%s", Names, err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return err
	}
	os.RemoveAll(dir)
	return os.Rename(tmp, dir)
}

// sourceKey hashes the Go toolchain and every file of the root module that
// can change a binary (the e2e module, VCS and build output excluded).
func sourceKey(root string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH, os.Getenv("GOFLAGS"), os.Getenv("CGO_ENABLED"))
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch name := d.Name(); {
			case rel == "e2e", rel == "bin", rel == "dist", name == "node_modules", name == "testdata", rel != "." && strings.HasPrefix(name, "."):
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, ".md") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		_, err = io.Copy(h, f)
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// prune removes builds of other source states that nobody used for an
// hour (a run in progress touches its own through the lock file).
func prune(base, keep string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".lock")
		if name == keep || strings.HasPrefix(name, "building-") {
			continue
		}
		if fi, err := os.Stat(filepath.Join(base, name+".lock")); err == nil && time.Since(fi.ModTime()) < time.Hour {
			continue
		}
		os.RemoveAll(filepath.Join(base, e.Name()))
	}
}
