package herdrlink

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// probe --watch on a Herdr whose new subscriptions start live (0.9:
// CHANGELOG 0.9.0 "API clients should subscribe before taking their
// initial snapshot", #1270) subscribes to pane events before agent.list;
// on 0.8.2, whose subscriptions replay history, it lists first (one
// stream).
func TestProbeWatchSubscribesBeforeSnapshot(t *testing.T) {
	for _, v := range []string{"0.8.2", sockettest.NewestHerdr} {
		t.Run(v, func(t *testing.T) {
			srv := simtest.New(t, nil, func(s *sockettest.Server) {
				s.Tick = 5 * time.Millisecond
				if err := s.UseHerdr(v); err != nil {
					t.Fatal(err)
				}
			})
			setPane(t, srv, "w1:p1")
			p := &prober{getenv: os.Getenv, timeout: time.Second}
			ctx, cancel := context.WithCancel(t.Context())
			var out, errb syncBuffer
			done := make(chan int)
			go func() { done <- p.watch(ctx, &out, &errb) }()
			for deadline := time.Now().Add(5 * time.Second); !strings.Contains(errb.String(), "watching") && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			_ = srv.World.Close("w1:p4")
			for deadline := time.Now().Add(5 * time.Second); !strings.Contains(out.String(), "pane_closed") && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			cancel()
			if code := <-done; code != 0 || !strings.Contains(out.String(), "pane_closed") {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
			}
			m := srv.Methods()
			sub, list := slices.Index(m, "events.subscribe"), slices.Index(m, "agent.list")
			if first := sub < list; first != (v != "0.8.2") {
				t.Errorf("Herdr %s: methods %v", v, m)
			}
		})
	}
}
