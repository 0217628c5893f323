package sockettest_test

import (
	"testing"

	"github.com/herdr-link/herdr-link/socket/sockettest"
)

func TestGeneratedWorld(t *testing.T) {
	tests := []struct {
		agents, workspaces int
		wantErr            bool
	}{
		{agents: 2, workspaces: 1},
		{agents: 10, workspaces: 3},
		{agents: 10000, workspaces: 500},
		{agents: 1, workspaces: 1, wantErr: true},
		{agents: 10, workspaces: 0, wantErr: true},
	}
	for _, tt := range tests {
		w, err := sockettest.GeneratedWorld(tt.agents, tt.workspaces)
		if tt.wantErr {
			if err == nil {
				t.Errorf("%d/%d: no error", tt.agents, tt.workspaces)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%d/%d: %v", tt.agents, tt.workspaces, err)
		}
		srv := sockettest.NewServer(w)
		agents, err := srv.Client().AgentList(t.Context())
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(agents) != tt.agents {
			t.Errorf("%d/%d: %d agents", tt.agents, tt.workspaces, len(agents))
		}
		perWS := map[string]int{}
		for _, a := range agents {
			perWS[a.WorkspaceID]++
		}
		if len(perWS) != tt.workspaces {
			t.Errorf("%d/%d: agents in %d workspaces", tt.agents, tt.workspaces, len(perWS))
		}
		self, ok1 := w.Agent("bench-self")
		peer, ok2 := w.Agent("bench-peer")
		if !ok1 || !ok2 || self.WorkspaceID != peer.WorkspaceID {
			t.Errorf("%d/%d: bench-self %v and bench-peer %v not together", tt.agents, tt.workspaces, self, peer)
		}
	}
}
