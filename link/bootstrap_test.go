package link_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// Long: one subtest per bootstrap rule of PROTOCOL.md §9, sharing one
// set-up. Each runs in a synctest bubble (setup's simulator is in
// memory), so the latencies, readiness retries and call timeouts it
// exercises are on the fake clock and a loaded machine cannot reorder them.
func TestSelfBootstrap(t *testing.T) {
	ctx := context.Background()
	run := func(name string, f func(t *testing.T)) {
		t.Run(name, func(t *testing.T) { synctest.Test(t, f) })
	}
	run("names an unnamed occupant once", func(t *testing.T) {
		e := setup(t)
		l := e.link("w1:p3") // the unnamed pi
		res, err := l.Peers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^hl-[0-9a-f]{8}$`).MatchString(res.Self.Name) {
			t.Fatalf("self name %q", res.Self.Name)
		}
		if a, _ := e.w.Agent("w1:p3"); a.Name == nil || *a.Name != res.Self.Name {
			t.Fatalf("herdr names w1:p3 %s, want %s", deref(a.Name), res.Self.Name)
		}
		// Later calls find it named: no second rename.
		e.roundTrips()
		again, _ := l.Peers(ctx)
		if again.Self.Name != res.Self.Name || strings.Contains(strings.Join(e.roundTrips(), ","), "agent.rename") {
			t.Fatalf("renamed again")
		}
	})
	run("never renames a named occupant", func(t *testing.T) {
		e := setup(t)
		if _, err := e.link("w1:p1").Bootstrap(ctx); err != nil {
			t.Fatal(err)
		}
		for _, m := range e.srv.Methods() {
			if m == "agent.rename" {
				t.Fatal("a named occupant was renamed")
			}
		}
	})
	run("collision regenerates within 3 attempts", func(t *testing.T) {
		e := setup(t)
		l := e.link("w1:p3")
		gen := []string{"reviewer", "ops", "hl-00000003"}
		var mu sync.Mutex
		l = relink(t, l, func(c *link.Config) {
			c.NameGen = func() string { mu.Lock(); defer mu.Unlock(); n := gen[0]; gen = gen[1:]; return n }
		})
		res, err := l.Peers(ctx)
		if err != nil || res.Self.Name != "hl-00000003" {
			t.Fatalf("Peers = self %q, %v; want hl-00000003 (the first name not taken)", res.Self.Name, err)
		}
		e2 := setup(t)
		l2 := e2.link("w1:p3")
		l2 = relink(t, l2, func(c *link.Config) { c.NameGen = func() string { return "reviewer" } })
		if _, err := l2.Peers(ctx); code(err) != link.SelfUnnamed {
			t.Fatalf("three collisions: %v", err)
		}
		renames := 0
		for _, m := range e2.srv.Methods() {
			if m == "agent.rename" {
				renames++
			}
		}
		if renames != 3 {
			t.Fatalf("%d renames, want 3", renames)
		}
	})
	run("concurrent callers share one rename", func(t *testing.T) {
		e := setup(t)
		e.srv.SetFault(schema.MethodAgentRename, sockettest.Fault{Latency: 50 * time.Millisecond})
		l := e.link("w1:p3")
		var wg sync.WaitGroup
		got := make([]string, 8)
		for i := range got {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				res, err := l.Peers(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = res.Self.Name
			}(i)
		}
		wg.Wait()
		renames := 0
		for _, m := range e.srv.Methods() {
			if m == "agent.rename" {
				renames++
			}
		}
		if renames != 1 {
			t.Fatalf("%d renames, want exactly 1", renames)
		}
		for _, n := range got {
			if n != got[0] {
				t.Fatalf("callers saw different names %v", got)
			}
		}
	})
	run("waits for detection", func(t *testing.T) {
		e := setup(t)
		l := e.link("w1:p4") // a shell, not yet detected
		l = relink(t, l, func(c *link.Config) { c.ReadinessRetries, c.ReadinessDelay = 5, 20*time.Millisecond })
		go func() { time.Sleep(30 * time.Millisecond); _ = e.w.Detect("w1:p4", "claude") }()
		name, err := l.Bootstrap(ctx)
		if err != nil || !strings.HasPrefix(name, "hl-") {
			t.Fatalf("%q %v", name, err)
		}
	})
	run("undetected occupant", func(t *testing.T) {
		e := setup(t)
		l := e.link("w1:p4")
		l = relink(t, l, func(c *link.Config) { c.ReadinessRetries = 2 })
		if _, err := l.Bootstrap(ctx); code(err) != link.SelfUnnamed {
			t.Fatalf("bootstrap: %v", err)
		}
		// Communication paths do not wait.
		if _, err := l.Send(ctx, link.SendRequest{To: "reviewer", Message: "x"}); code(err) != link.SelfUnnamed {
			t.Fatalf("send: %v", err)
		}
	})
	run("transport failure stays NOT_IN_HERDR", func(t *testing.T) {
		e := setup(t)
		e.srv.SetFault(schema.MethodAgentRename, sockettest.Fault{Hang: true})
		if _, err := e.link("w1:p3").Peers(ctx); code(err) != link.NotInHerdr {
			t.Fatalf("rename hang: %v", err)
		}
	})
}
