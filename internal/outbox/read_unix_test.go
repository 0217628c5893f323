//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package outbox

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A store file that cannot be a record is never read past a bound, never
// followed through a link, never waited on: the reader gets ErrDamaged at
// once, the file is set aside (listed by Damaged, out of every count),
// and nothing of what a link leads to comes back as a message's text.
//
// Long: one table of ways a file is not a record, then one sequence of
// checks on each (read, set aside, counts, listing, log, removal).
func TestReadRefusesWhatIsNotARecord(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte(`{"id":"m","text":"the secret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// spoil replaces the file at p.
		spoil func(t *testing.T, p string)
	}{
		{"sparse file over the bound", func(t *testing.T, p string) {
			if err := os.Truncate(p, MaxRecordBytes+1); err != nil {
				t.Fatal(err)
			}
		}},
		{"link to /dev/zero", func(t *testing.T, p string) { relink(t, "/dev/zero", p) }},
		{"link to a file outside the store", func(t *testing.T, p string) { relink(t, outside, p) }},
		{"fifo", func(t *testing.T, p string) {
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"directory", func(t *testing.T, p string) {
			os.Remove(p)
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"garbage", func(t *testing.T, p string) { rewriteFile(t, p, "not json at all") }},
		{"half its JSON", func(t *testing.T, p string) { rewriteFile(t, p, `{"id":"m","text":"hel`) }},
		{"empty", func(t *testing.T, p string) { rewriteFile(t, p, "") }},
		{"NULs", func(t *testing.T, p string) { rewriteFile(t, p, "\x00\x00\x00\x00") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			var logs bytes.Buffer
			s.Log = slog.New(slog.NewTextHandler(&logs, nil))
			other := another(t, s)
			m := mustAdd(t, s, msg("m", "rev", "brain", "hello"), t0)
			e, err := s.Find("m")
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(s.Dir, e.name)
			tc.spoil(t, p)
			done := make(chan error, 1)
			go func() {
				got, err := s.Read(e)
				if strings.Contains(got.Text, "secret") {
					err = errors.New("the text of a file outside the store was read: " + got.Text)
				}
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, ErrDamaged) {
					t.Fatalf("Read = %v, want ErrDamaged", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Read did not return: it waits on the file")
			}
			if _, err := os.Lstat(p + damagedSuffix); err != nil {
				t.Errorf("not set aside: %v", err)
			}
			// Another process's next look: not held, not counted.
			if ents, _ := other.ListForTarget(m.Target); len(ents) != 0 {
				t.Errorf("ListForTarget = %s, want nothing", ids(ents))
			}
			if held, _, _ := other.CountsForSender(m.Sender); len(held) != 0 {
				t.Errorf("held = %v, want none", held)
			}
			ds, err := other.Damaged()
			if err != nil || len(ds) != 1 || ds[0].ID != "m" || ds[0].State != StateHeld {
				t.Fatalf("Damaged = %s, %v; want m (h)", damagedIDs(ds), err)
			}
			if n := strings.Count(logs.String(), "damaged record set aside"); n != 1 {
				t.Errorf("%d log lines, want 1:\n%s", n, logs.String())
			}
			// A second reader of the same stale entry finds it gone and logs
			// nothing.
			other.Log = s.Log
			if _, err := other.Read(e); !errors.Is(err, ErrNotFound) {
				t.Errorf("second Read = %v, want ErrNotFound", err)
			}
			if n := strings.Count(logs.String(), "damaged record set aside"); n != 1 {
				t.Errorf("%d log lines after a second read, want 1", n)
			}
			if n, err := other.RemoveDamaged("m"); n != 1 || err != nil {
				t.Errorf("RemoveDamaged = %d, %v", n, err)
			}
			if _, err := os.Stat(outside); err != nil {
				t.Errorf("the file a link led to was touched: %v", err)
			}
			if ds, _ := other.Damaged(); len(ds) != 0 {
				t.Errorf("Damaged after removal = %s, want none", damagedIDs(ds))
			}
		})
	}
}

// A ledger that is not a regular file of this user (a link planted in
// its place) is never followed: a request is refused, saying why.
func TestLedgerNotARegularFile(t *testing.T) {
	s := open(t)
	relink(t, "/dev/zero", filepath.Join(s.Dir, ledgerName))
	_, err := s.AddRequest(Request{ID: "q1", To: "rev", From: "brain", TargetKey: "term_rev", FromKey: "term_brain", Expires: t0.Add(time.Hour)}, t0)
	if err == nil || !strings.Contains(err.Error(), "ledger") {
		t.Fatalf("AddRequest with the ledger a link: got %v, want an error naming the ledger", err)
	}
	if _, err := s.PendingRequests(); err == nil {
		t.Errorf("PendingRequests with the ledger a link: got no error, want one")
	}
}

func relink(t *testing.T, to, p string) {
	t.Helper()
	os.Remove(p)
	if err := os.Symlink(to, p); err != nil {
		t.Fatal(err)
	}
}

func rewriteFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// damagedIDs lists damaged records as id (state) for a failure message.
func damagedIDs(ds []Damaged) string {
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%c)", d.ID, d.State)
	}
	return "[" + b.String() + "]"
}
