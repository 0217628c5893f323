package link_test

import (
	"context"
	"testing"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// Herdr 0.9's combined agent list (`herdr machine`, #3670) is made by each
// client from one server per machine: the machine catalog lives in the
// client (herdrdev/herdr src/cli/machine.rs: EndpointCatalog), every
// server's agent.list is its own state (collect_agent_infos), and the
// protocol-22 AgentInfo has no machine field. So a herdr-link process sees
// only its machine's server, where workspace ids are that server's own;
// two machines both have a w1. These tests hold the privacy property on
// both sides: an agent of another machine is never a peer, even with the
// caller's workspace id.
func TestOtherMachineNeverAPeer(t *testing.T) {
	herdrWorlds(t, func(t *testing.T, v string, opt func(*sockettest.Server)) {
		a := setup(t, opt) // this machine
		other, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
			{"id":"w1:p1","agent":{"kind":"claude","name":"remote","status":"idle"}}]}]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		b := simtest.New(t, other, opt) // another machine, its own w1
		l := a.link("w1:p1")
		ps, err := l.Peers(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps.Peers {
			if p.Name == "remote" {
				t.Fatalf("peers %s, want none of another machine (remote)", names(ps.Peers))
			}
		}
		if _, err := l.Send(t.Context(), link.SendRequest{To: "remote", Message: "hi"}); code(err) != link.PeerNotFound {
			t.Fatalf("send to another machine's agent: %v", err)
		}
		if n := len(b.World.Submissions("w1:p1")); n != 0 {
			t.Fatalf("%d submissions on the other machine", n)
		}
	})
}

// A combined list that did carry another machine's agent would not name
// it with a pane id of the caller's workspace: such an entry is never a
// peer, whatever its workspace id says.
func TestForeignPaneIDNeverAPeer(t *testing.T) {
	f := &foreignList{newFake("claude", "idle")}
	l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1"})
	if _, err := l.Send(t.Context(), link.SendRequest{To: "remote", Message: "hi"}); code(err) != link.PeerNotFound {
		t.Fatalf("send to a foreign entry: %v", err)
	}
	ps, err := l.Peers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps.Peers {
		if p.Name == "remote" {
			t.Fatalf("peers %s, want no foreign entry (remote)", names(ps.Peers))
		}
	}
}

type foreignList struct{ *fakeHerdr }

func (f *foreignList) ListAgents(ctx context.Context) ([]link.Agent, error) {
	as, err := f.fakeHerdr.ListAgents(ctx)
	return append(as, link.Agent{Name: "remote", Status: "idle", WorkspaceID: "w1", PaneID: "build-box/w1:p2", TerminalID: "term_9", Kind: "claude"}), err
}
