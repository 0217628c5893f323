package herdrlink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/recording"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

func shortRecording(t *testing.T) {
	srv := simtest.New(t, nil)
	setPane(t, srv, "w1:p1")
}

// probe --record FILE never writes through a symbolic link at FILE: a
// link another user planted to a victim file leaves the victim as it was,
// and the probe refuses, saying why.
func TestRecordRefusesSymlink(t *testing.T) {
	shortRecording(t)
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "rec.txt")
	if err := os.Symlink(victim, file); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runProbeEvents(t, 50*time.Millisecond, "--record", file)
	if code == 0 || !strings.Contains(errOut, "symbolic link") {
		t.Errorf("probe --record through a link: exit %d\n%s%s", code, out, errOut)
	}
	got, err := os.ReadFile(victim)
	if err != nil || string(got) != "precious\n" {
		t.Fatalf("the victim now holds %q (%v)", got, err)
	}
	if fi, _ := os.Stat(victim); fi.Mode().Perm() != 0o644 {
		t.Fatalf("the victim's mode is now %v", fi.Mode())
	}
	if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	assertNoTemp(t, dir, 2)
}

// An existing regular file at FILE is replaced by a new recording of mode
// 0600 (a recording is private whatever the old file's mode); a hard link
// to the old file keeps the old content.
func TestRecordReplacesWithPrivateFile(t *testing.T) {
	shortRecording(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "rec.txt")
	if err := os.WriteFile(file, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "hardlink")
	if err := os.Link(file, other); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runProbeEvents(t, 50*time.Millisecond, "--record", file)
	if code != 0 {
		t.Fatalf("probe --record: exit %d\n%s%s", code, out, errOut)
	}
	fi, err := os.Lstat(file)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("recording: %v %v, want a regular file of mode 0600", fi.Mode(), err)
	}
	data, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(data), recording.Header+"\n") {
		t.Fatalf("recording starts %q", truncateTest(data))
	}
	if got, _ := os.ReadFile(other); string(got) != "old\n" {
		t.Fatalf("the hard link now holds %q", truncateTest(got))
	}
	assertNoTemp(t, dir, 2)
}

// A new recording is 0600 whatever the umask lets through.
func TestRecordNewFileMode(t *testing.T) {
	shortRecording(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "rec.txt")
	if _, errOut, code := runProbeEvents(t, 50*time.Millisecond, "--record", file); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if fi, err := os.Lstat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("recording: %v %v", fi, err)
	}
	// A directory at FILE is refused, and left alone.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runProbeEvents(t, 50*time.Millisecond, "--record", sub); code == 0 || !strings.Contains(errOut, "not a regular file") {
		t.Fatalf("a directory: exit %d: %s", code, errOut)
	}
	assertNoTemp(t, dir, 2)
}

// --record "" is a usage error, not a plain probe.
func TestRecordEmptyIsUsageError(t *testing.T) {
	shortRecording(t)
	for _, args := range [][]string{{"--record", ""}, {"--record="}, {"-record", ""}} {
		out, errOut, code := runProbeEvents(t, 50*time.Millisecond, args...)
		if code != 2 || !strings.Contains(errOut, "-record") || strings.Contains(out, "pass") {
			t.Errorf("%q: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

func assertNoTemp(t *testing.T, dir string, want int) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	if len(ents) != want {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("the directory holds %q, want %d entries (a temporary file left behind?)", names, want)
	}
}

func truncateTest(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}
