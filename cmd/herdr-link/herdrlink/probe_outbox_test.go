package herdrlink

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// The probe says when held messages wait with no herdr-link process to
// move them (their accepting server exited, none runs), and how to move
// them; held messages of a live server, or of an exited one while another
// server runs, are not a warning.
func TestProbeHeldWithNoServer(t *testing.T) {
	srv := simtest.New(t, nil)
	setPane(t, srv, "w1:p1")
	pl := &panelock.Locker{Scope: srv.Path()}
	dir, err := pl.DirPath()
	if err != nil {
		t.Skipf("no private lock directory: %v", err)
	}
	open := func() *outbox.Store {
		st, err := outbox.Open(dir, pl.ScopeID())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	acceptor := open()
	t.Cleanup(func() { _ = os.RemoveAll(acceptor.Dir) })
	m := outbox.Message{ID: "hl_probeheld", From: "brain", To: "reviewer", TargetKey: "pane:w1:p2", FromKey: "pane:w1:p1",
		PaneID: "w1:p2", WorkspaceID: "w1", Text: "x", Expires: time.Now().Add(time.Hour)}
	if _, err := acceptor.Add(m, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, want string
		before     func()
	}{
		{"its server runs", "PASS  held messages", func() {}},
		{"its server exited", "WARN  held messages", acceptor.Release},
	} {
		c.before()
		out, _, _ := runProbe(t)
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "held messages") {
				line = l
			}
		}
		if !strings.Contains(line, c.want) {
			t.Errorf("%s: probe line %q, want %q; report:\n%s", c.name, line, c.want, out)
		}
		if c.name == "its server exited" && !strings.Contains(out, "herdr-link deliver -all") {
			t.Errorf("%s: no fix naming herdr-link deliver:\n%s", c.name, out)
		}
	}
	other := open()
	if _, err := other.Token(); err != nil { // another server runs
		t.Fatal(err)
	}
	defer other.Release()
	if out, _, _ := runProbe(t); !strings.Contains(out, "a running herdr-link server moves those") {
		t.Errorf("with another server running:\n%s", out)
	}
}
