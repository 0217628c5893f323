package link_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// A caller whose existing name is outside the Agent Name grammar is a
// named occupant: herdr-link never renames it (PROTOCOL.md §9), and every
// call that needs the caller's name says so, without the name or any id.
func TestBadSelfNameNotRenamed(t *testing.T) {
	for _, tc := range []struct{ name, self string }{
		{"uppercase", "Brain"},
		{"33 characters", "a" + strings.Repeat("b", 32)},
		{"control character", "br\x1bain"},
		{"leading digit", "1brain"},
		{"colon", "w1:p1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			self, _ := jsonx.Marshal(tc.self)
			w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","label":"app","tabs":[{"id":"w1:t1","panes":[
   {"id":"w1:p1","agent":{"kind":"claude","name":` + string(self) + `,"status":"idle"}},
   {"id":"w1:p2","agent":{"kind":"codex","name":"reviewer","status":"idle"}}]}]}]}`))
			if err != nil {
				t.Fatal(err)
			}
			e := env{srv: simtest.New(t, w), w: w}
			l := e.link("w1:p1")
			ctx := t.Context()
			calls := map[string]func() error{
				"bootstrap": func() error { _, err := l.Bootstrap(ctx); return err },
				"peers":     func() error { _, err := l.Peers(ctx); return err },
				"send":      func() error { _, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "hello"}); return err },
			}
			for _, call := range []string{"bootstrap", "peers", "send"} {
				err := calls[call]()
				var le *link.Error
				if !errors.As(err, &le) || le.Code != link.SelfUnnamed {
					t.Fatalf("%s: %v, want SELF_UNNAMED", call, err)
				}
				msg := err.Error()
				if !strings.Contains(msg, "not a valid agent name") || !strings.Contains(msg, "Herdr") {
					t.Errorf("%s: %q does not say what to do", call, msg)
				}
				if strings.Contains(msg, tc.self) || strings.Contains(msg, "w1") || strings.ContainsAny(msg, "\x1b") {
					t.Errorf("%s: %q shows the name or an id", call, msg)
				}
			}
			for _, m := range e.srv.Methods() {
				if m == "agent.rename" {
					t.Fatal("a named occupant was renamed")
				}
			}
			if a, _ := e.w.Agent("w1:p1"); a.Name == nil || *a.Name != tc.self {
				t.Fatalf("herdr now names w1:p1 %s, want %s", deref(a.Name), tc.self)
			}
			if p := e.w.Prompts("w1:p2"); len(p) != 0 {
				t.Fatalf("%d messages reached the target", len(p))
			}
		})
	}
}
