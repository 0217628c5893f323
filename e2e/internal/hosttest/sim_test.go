package hosttest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/e2e/internal/bins"
)

// buildTree returns the path of herdr-link or herdr-sim, built once for
// the e2e packages (package bins).
func buildTree(t *testing.T, name string) string {
	t.Helper()
	p, err := bins.Path(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSim runs the scenario's world in herdr-sim built from the tree and
// checks the queries the runner's assertions rest on.
func TestSim(t *testing.T) {
	if testing.Short() {
		t.Skip("builds herdr-sim")
	}
	s, err := StartSim(buildTree(t, "herdr-sim"), World("claude"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if env := s.Env(ReviewerPane); !slices.Contains(env, "HERDR_PANE_ID="+ReviewerPane) {
		t.Fatalf("env %v", env)
	}
	env := `{"protocol":"herdr-link/1","id":"hl_mx4gjvcd_61wfrv9c","from":"brain","to":"reviewer","message":"m"}`
	if out, errb, err := s.verb("agent", "prompt", "reviewer", "wrapper\n"+env); err != nil {
		t.Fatalf("prompt: %v %s %s", err, out, errb)
	}
	r := &Result{Delivered: map[string]int{}}
	d, ok := r.delivered(s, ReviewerPane, "brain", "reviewer", "m", "")
	if !ok || d.env.ID != "hl_mx4gjvcd_61wfrv9c" || !strings.Contains(d.text, "<pasted_content") {
		t.Fatalf("delivered = %s in %q, %v (failures %v); want hl_mx4gjvcd_61wfrv9c in a pasted turn, true", d.env.ID, d.text, ok, r.Failures)
	}
	// A second copy is a failure, even while it waits behind the turn the
	// first one started.
	if _, _, err := s.verb("agent", "prompt", "reviewer", "again\n"+env); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.delivered(s, ReviewerPane, "brain", "reviewer", "m", ""); ok || len(r.Failures) != 1 || !strings.Contains(r.Failures[0], "2 envelope(s)") {
		t.Fatalf("a duplicate passed: %v", r.Failures)
	}
	if turns, err := s.Turns(OtherPane); err != nil || len(turns) != 0 {
		t.Fatalf("other pane: %v %v", turns, err)
	}
	if _, _, err := s.verb("pane", "close", ReviewerPane); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Turns(ReviewerPane); !errors.Is(err, ErrPaneGone) {
		t.Fatalf("turns of a closed pane: %v", err)
	}
	if panes, err := s.Panes(); err != nil || slices.Contains(panes, ReviewerPane) || len(panes) != 2 {
		t.Fatalf("panes %v %v", panes, err)
	}
}
