package link_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/link"
)

// Starts are bounded per server: at most StartLimit in any StartWindow.
// One more is refused before anything reaches Herdr (START_FAILED, a text
// that says the bound and when to try again); once the oldest start
// leaves the window, a start is admitted again. Failed starts count.
func TestStartRateBound(t *testing.T) { synctest.Test(t, testStartRateBound) }

func testStartRateBound(t *testing.T) {
	e := setup(t)
	l := e.startLink(t, "w1:p1")
	l = relink(t, l, func(c *link.Config) { c.StartLimit, c.StartWindow = 3, 10*time.Second })
	start := func(name string) error {
		_, err := l.Start(t.Context(), link.StartRequest{Name: name, Kind: "claude"})
		return err
	}
	for i := range 2 {
		if err := start(fmt.Sprintf("tester%d", i)); err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
	}
	// A refused name counts too.
	if err := start("reviewer"); !errors.Is(err, link.ErrStartNameTaken) {
		t.Fatalf("start of a taken name: %v", err)
	}
	time.Sleep(4 * time.Second)
	panes := len(e.w.PaneIDs())
	e.srv.ResetRequests()
	err := start("tester9")
	var le *link.Error
	if !errors.As(err, &le) || le.Code != link.StartFailed {
		t.Fatalf("fourth start in the window: %v, want START_FAILED", err)
	}
	const want = "too many agents started: this agent may start at most 3 in 10s; nothing was created, try again in 6 s"
	if le.Detail != want {
		t.Errorf("detail %q, want %q", le.Detail, want)
	}
	if got := e.roundTrips(); len(got) != 0 {
		t.Errorf("a refused start called Herdr: %v", got)
	}
	if got := len(e.w.PaneIDs()); got != panes {
		t.Errorf("panes %d → %d", panes, got)
	}
	// The window slides: 6 s later the first starts have left it, and
	// three more are admitted in the next window.
	time.Sleep(6 * time.Second)
	for i := 5; i < 8; i++ {
		if err := start(fmt.Sprintf("tester%d", i)); err != nil {
			t.Fatalf("start after the window: %v", err)
		}
	}
	if err := start("tester8"); err == nil || !strings.Contains(err.Error(), "too many agents started") {
		t.Fatalf("start over the bound again: %v", err)
	}
}
