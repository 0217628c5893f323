package herdrbench

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/herdr-link/herdr-link/e2e/internal/bins"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// bench and linkBin are herdr-bench and herdr-link, built once for all the
// e2e packages (package bins); herdr-bench finds herdr-link and herdr-sim
// beside itself.
var bench, linkBin string

func TestMain(m *testing.M) {
	dir, err := bins.Dir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	bench, linkBin = filepath.Join(dir, "herdr-bench"), filepath.Join(dir, "herdr-link")
	os.Exit(simtest.Main(m))
}

const e2eWorld = `{"workspaces":[
 {"id":"w1","label":"app","tabs":[{"id":"w1:t1","panes":[
   {"id":"w1:p1","agent":{"kind":"claude","name":"brain","status":"working"}},
   {"id":"w1:p2","agent":{"kind":"codex","name":"reviewer","status":"idle"}},
   {"id":"w1:p3","agent":{"kind":"claude","name":"stuck","status":"blocked"}}
 ]}]}]}`
