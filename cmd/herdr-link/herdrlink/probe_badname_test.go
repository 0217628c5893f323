package herdrlink

import (
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// The probe says that a caller named outside the Agent Name grammar is
// not renamed and how to fix it, instead of promising a bootstrap.
func TestProbeSelfNameOutsideGrammar(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","label":"app","tabs":[{"id":"w1:t1","panes":[
   {"id":"w1:p1","agent":{"kind":"claude","name":"Brain","status":"idle"}}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w)
	setPane(t, srv, "w1:p1")
	out, errOut, code := runProbe(t)
	if code != 1 || !strings.Contains(out, `named "Brain"`) || !strings.Contains(out, "never renames") || strings.Contains(out, "will name it") {
		t.Fatalf("probe: exit %d\n%s%s", code, out, errOut)
	}
}
