//go:build unix

package herdrlink

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/herdr-link/herdr-link/e2e/internal/bins"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

var (
	e2eBinOnce sync.Once
	e2eBin     string
	e2eBinErr  error
)

// rootsBinary is herdr-link built with -tags herdrlink_e2e: its lock
// directory's roots come from HERDR_LINK_E2E_LOCK_ROOTS, so a test can
// pre-empt them as another user would, or have a directory of its own;
// HERDR_LINK_E2E_CRASH_AT makes it kill itself at a step of a held
// delivery.
func rootsBinary(t *testing.T) string {
	t.Helper()
	e2eBinOnce.Do(func() {
		root, err := bins.Root()
		if err != nil {
			e2eBinErr = err
			return
		}
		dir, err := os.MkdirTemp("", "hl-e2e-roots")
		if err != nil {
			e2eBinErr = err
			return
		}
		e2eBin = filepath.Join(dir, "herdr-link")
		cmd := exec.Command("go", "build", "-tags", "herdrlink_e2e", "-o", e2eBin, "./cmd/herdr-link")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			e2eBinErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if e2eBinErr != nil {
		t.Fatal(e2eBinErr)
	}
	return e2eBin
}

// A lock directory pre-empted by another user (/tmp/herdr-link-<uid> made
// by someone else, world-writable, a link, a plain file) neither turns
// serialization off nor lets the message through unserialized: with a
// home, its directory is used and concurrent senders never merge; without
// one, nothing is delivered, with a clear error.
func TestPreemptedLockDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	bin := rootsBinary(t)
	uid := strconv.Itoa(os.Getuid())
	preempt := map[string]func(t *testing.T, p string){
		"world-writable": func(t *testing.T, p string) { mkdirMode(t, p, 0o777) },
		"a link": func(t *testing.T, p string) {
			mkdirMode(t, p+"-real", 0o700)
			if err := os.Symlink(p+"-real", p); err != nil {
				t.Fatal(err)
			}
		},
		"a plain file": func(t *testing.T, p string) {
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"another owner": func(t *testing.T, p string) {
			if os.Getuid() != 0 {
				mkdirMode(t, p, 0o755) // not root: an unsafe mode stands in
				return
			}
			mkdirMode(t, p, 0o700)
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, prep := range preempt {
		for _, withHome := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/home=%v", name, withHome), func(t *testing.T) {
				t.Parallel()
				base := t.TempDir()
				run, home, tmp := filepath.Join(base, "run"), filepath.Join(base, "home"), filepath.Join(base, "tmp")
				mkdirMode(t, run, 0o755)
				mkdirMode(t, home, 0o755)
				mkdirMode(t, tmp, 0o777|os.ModeSticky)
				prep(t, filepath.Join(tmp, "herdr-link-"+uid))
				homeArg := home
				if !withHome {
					homeArg = ""
				}
				env := "HERDR_LINK_E2E_LOCK_ROOTS=" + run + "|" + homeArg + "|" + tmp
				n := 5
				w := trialWorld(t, []string{"s1", "s2"}, n, `"kind":"claude","status":"idle","turn_ms":30,"submit_ms":30`)
				srv := simtest.New(t, w, func(s *sockettest.Server) { s.SubmitDelay = deliveryEnterDelay })
				ps := []hlProc{startProc(t, bin, srv, paneOf(w, "s1"), deliveryFlags, env), startProc(t, bin, srv, paneOf(w, "s2"), deliveryFlags, env)}
				out := sendEach(t, ps, targets(n))
				if sent := len(out) * len(out["target-1"]); sent != 2*n {
					t.Fatalf("%d sends made, want %d", sent, 2*n)
				}
				if withHome {
					checkTrials(t, w, out)
					if st, err := os.Lstat(filepath.Join(home, ".local", "state", "herdr-link")); err != nil || st.Mode().Perm() != 0o700 {
						t.Errorf("home lock directory: %v", err)
					}
					return
				}
				const want = "SEND_FAILED: the delivery lock is unavailable: herdr-link found no directory private to this user (another user may have made the one it must use); nothing was delivered. The operator can see which directory failed which check with 'herdr-link outbox' and fix it (remove a directory another user made, or give this user a private /run/user directory or a home directory)"
				for to, rs := range out {
					for _, r := range rs {
						if !r.isErr || r.text != want {
							t.Errorf("send to %s: %q, want the lock's error", to, r.text)
						}
					}
					if p := w.Prompts(paneOf(w, to)); len(p) != 0 {
						t.Errorf("%s: %d prompts typed without the lock", to, len(p))
					}
				}
			})
		}
	}
}

func mkdirMode(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}
