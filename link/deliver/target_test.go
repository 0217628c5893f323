package deliver_test

import (
	"testing"

	"github.com/herdr-link/herdr-link/link/deliver"
)

func TestSameOccupant(t *testing.T) {
	base := deliver.Agent{Name: "a", PaneID: "w1:p1", TerminalID: "t1", Kind: "claude"}
	session := func(v string) *deliver.AgentSession { return &deliver.AgentSession{Source: "claude", Value: v} }
	for _, tc := range []struct {
		name        string
		target, got func(*deliver.Agent)
		want        bool
	}{
		{"the same agent", nil, nil, true},
		{"renamed", nil, func(a *deliver.Agent) { a.Name = "b" }, true},
		{"another pane", nil, func(a *deliver.Agent) { a.PaneID = "w1:p2" }, false},
		{"another terminal", nil, func(a *deliver.Agent) { a.TerminalID = "t2" }, false},
		{"another kind", nil, func(a *deliver.Agent) { a.Kind = "codex" }, false},
		{"a kind not reported", nil, func(a *deliver.Agent) { a.Kind = "" }, true},
		{"no terminal ids: the name decides", func(a *deliver.Agent) { a.TerminalID = "" }, func(a *deliver.Agent) { a.TerminalID = "" }, true},
		{"no terminal ids, renamed", func(a *deliver.Agent) { a.TerminalID = "" }, func(a *deliver.Agent) { a.TerminalID, a.Name = "", "b" }, false},
		{"the session pinned", func(a *deliver.Agent) { a.Session = session("s1") }, func(a *deliver.Agent) { a.Session = session("s1") }, true},
		{"another session", func(a *deliver.Agent) { a.Session = session("s1") }, func(a *deliver.Agent) { a.Session = session("s2") }, false},
		{"the session gone", func(a *deliver.Agent) { a.Session = session("s1") }, nil, false},
		{"none pinned", nil, func(a *deliver.Agent) { a.Session = session("s2") }, true},
	} {
		target, got := base, base
		if tc.target != nil {
			tc.target(&target)
		}
		if tc.got != nil {
			tc.got(&got)
		}
		if r := deliver.SameOccupant(target, got); r != tc.want {
			t.Errorf("%s: SameOccupant: got %v, want %v", tc.name, r, tc.want)
		}
	}
}

func TestLockKey(t *testing.T) {
	for _, tc := range []struct {
		a    deliver.Agent
		want string
	}{
		{deliver.Agent{PaneID: "w1:p1", TerminalID: "t1"}, "t1"},
		{deliver.Agent{PaneID: "w1:p1"}, "pane:w1:p1"},
	} {
		if got := deliver.LockKey(tc.a); got != tc.want {
			t.Errorf("LockKey of pane %q, terminal %q: got %q, want %q", tc.a.PaneID, tc.a.TerminalID, got, tc.want)
		}
	}
}
