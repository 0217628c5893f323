package herdrstate

import "fmt"

// GeneratedSpec describes a synthetic session of agents agents spread
// round-robin over workspaces workspaces (one tab each), for benchmarks
// of large sessions: agent 0 is "bench-self" and agent 1 "bench-peer",
// both in the first workspace; agent i is "a<i>". Every agent is an idle
// claude. It needs agents ≥ 2 and workspaces ≥ 1.
func GeneratedSpec(agents, workspaces int) (WorldSpec, error) {
	if agents < 2 || workspaces < 1 {
		return WorldSpec{}, fmt.Errorf("sockettest: a generated world needs at least 2 agents and 1 workspace, not %d and %d", agents, workspaces)
	}
	spec := WorldSpec{Workspaces: make([]WorkspaceSpec, workspaces)}
	for i := range spec.Workspaces {
		spec.Workspaces[i] = WorkspaceSpec{Label: fmt.Sprintf("ws%d", i+1), Tabs: []TabSpec{{Panes: make([]PaneSpec, 0, agents/workspaces+1)}}}
	}
	for i := 0; i < agents; i++ {
		a := &AgentSpec{Kind: "claude", Name: fmt.Sprintf("a%d", i), Status: "idle"}
		ws := i % workspaces
		switch i {
		case 0:
			a.Name, ws = "bench-self", 0
		case 1:
			a.Name, ws = "bench-peer", 0
		}
		t := &spec.Workspaces[ws].Tabs[0]
		t.Panes = append(t.Panes, PaneSpec{CWD: "/work", Agent: a})
	}
	return spec, nil
}

// GeneratedWorld builds the world of [GeneratedSpec].
func GeneratedWorld(agents, workspaces int) (*World, error) {
	spec, err := GeneratedSpec(agents, workspaces)
	if err != nil {
		return nil, err
	}
	return NewWorld(spec)
}
