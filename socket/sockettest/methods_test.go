package sockettest_test

import (
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

func ptr[T any](v T) *T { return &v }

const testWorld = `{"workspaces":[
 {"id":"w1","label":"main","tabs":[{"id":"w1:t1","panes":[
   {"id":"w1:p1","cwd":"/repo","agent":{"kind":"claude","name":"brain","status":"working"}},
   {"id":"w1:p2","agent":{"kind":"pi","status":"idle"}},
   {"id":"w1:p3"},
   {"id":"w1:p4","agent":{"kind":"codex","name":"blocky","status":"blocked"}},
   {"id":"w1:p5","agent":{"kind":"my-hook-bot","name":"custom","status":"idle"}},
   {"id":"w1:p6","agent":{"kind":"claude","name":"pending","status":"idle","launch_pending":true}},
   {"id":"w1:p7","agent":{"kind":"codex","name":"gone","status":"idle","not_foreground":true}},
   {"id":"w1:p8","agent":{"kind":"copilot","name":"pilot","status":"idle","bracketed_paste":true}},
   {"id":"w1:p9","agent":{"kind":"claude","name":"broken","status":"idle","prompt_fails":true}},
   {"id":"w1:pA","agent":{"kind":"claude","name":"finished","status":"done"}}
 ]}]},
 {"id":"w2","label":"other","tabs":[{"id":"w2:t1","panes":[
   {"id":"w2:p1","agent":{"kind":"codex","name":"far","status":"idle"}},
   {"id":"w2:p2"}
 ]}]}]}`

func newWorld(t *testing.T) *sockettest.World {
	t.Helper()
	w, err := sockettest.ParseWorld([]byte(testWorld))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func codeOf(err error) string { return socket.CodeOf(err) }

// deref reads an optional string for a failure message.
func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestWorldFile(t *testing.T) {
	for _, bad := range []string{
		`{"workspaces":[{"id":"w1","tabs":[]}]}`,
		`{"workspaces":[{"tabs":[{"panes":[{"agent":{"kind":"x","status":"sleepy"}}]}]}]}`,
		`{"workspaces":[{"tabs":[{"panes":[{"id":"a"},{"id":"a"}]}]}]}`,
		`{"workspaces":[],"unknown":1}`,
		`{"workspaces":[{"tabs":[{"panes":[{"agent":{}}]}]}]}`,
	} {
		if _, err := sockettest.ParseWorld([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	// A world with a named, an unnamed and no agent parses, with generated
	// terminal ids.
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","label":"main","tabs":[{"id":"w1:t1","panes":[{"id":"w1:p1","cwd":"/repo","agent":{"kind":"claude","name":"brain","status":"working"}},{"id":"w1:p2","agent":{"kind":"pi","status":"idle"}},{"id":"w1:p3"}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w)
	agents, err := srv.Client().AgentList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(agents) != 2 {
		t.Fatalf("got %d agents, want 2", len(agents))
	}
	if deref(agents[0].Name) != "brain" || agents[1].Name != nil || !strings.HasPrefix(agents[0].TerminalID, "term_") {
		t.Fatalf("agents = %s (terminal %s), %s; want brain (terminal term_…), <nil>",
			deref(agents[0].Name), agents[0].TerminalID, deref(agents[1].Name))
	}
	// The default world has two workspaces, named and unnamed agents and a shell.
	d := sockettest.DefaultWorld()
	ids := strings.Join(d.PaneIDs(), " ")
	if !strings.Contains(ids, "w1:") || !strings.Contains(ids, "w2:") {
		t.Fatalf("default world panes %s", ids)
	}
}

func TestEncodeNumber(t *testing.T) {
	for n, want := range map[uint64]string{1: "1", 9: "9", 10: "A", 31: "Z", 32: "0", 33: "11", 64: "10", 65: "21", 1056: "00", 1057: "111"} {
		if got := sockettest.EncodeNumber(n); got != want {
			t.Errorf("EncodeNumber(%d) = %q, want %q", n, got, want)
		}
		if back, ok := sockettest.DecodeNumber(want); !ok || back != n {
			t.Errorf("DecodeNumber(%q) = %d, %v", want, back, ok)
		}
	}
}
