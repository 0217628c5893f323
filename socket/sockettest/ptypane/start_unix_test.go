//go:build unix

package ptypane_test

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/ptypane"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// agent.start of a kind with a start program runs that program, with the
// start's args, in the pane's pseudo-terminal.
func TestAgentStartRunsAProgram(t *testing.T) {
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[{"id":"w1:p1"}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(helperEnv, "echo") // the program inherits the simulator's environment
	w.SetStartProgram("claude", []string{exe, "-test.run=^$"})
	srv := simtest.New(t, w, sockettest.WithPrograms(ptypane.Start))
	ctx := ctxT(t, 20*time.Second)
	if _, err := srv.Client().AgentStart(ctx, schema.AgentStartParams{Name: "tester", Kind: "claude", PaneID: "w1:p1", Args: []string{"-test.v=false"}}); err != nil {
		t.Fatal(err)
	}
	var pane *ptypane.Pane
	for pane == nil {
		pane, _ = srv.Program("w1:p1").(*ptypane.Pane)
		select {
		case <-ctx.Done():
			t.Fatal("no program started in the pane")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := pane.WaitOutput(ctx, func(out []byte) bool { return bytes.Contains(out, []byte("armed\r\n")) }); err != nil {
		t.Fatalf("the program never armed: %v; output %q", err, pane.Output())
	}
}
