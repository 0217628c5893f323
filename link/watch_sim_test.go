package link_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// simTarget is an in-memory simulator (for a synctest bubble) of version
// v whose agents submit 1 ms after Herdr's Enter, which comes 5 ms after
// the text; tick is the server's event and wait tick.
func simTarget(t testing.TB, v string, tick time.Duration) *sockettest.Server {
	t.Helper()
	spec, err := sockettest.GeneratedSpec(4, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range spec.Workspaces {
		for _, p := range ws.Tabs[0].Panes {
			one := 1
			p.Agent.TurnMS, p.Agent.SubmitMS = 1000, &one
		}
	}
	w, err := sockettest.NewWorld(spec)
	if err != nil {
		t.Fatal(err)
	}
	s := sockettest.NewUnstartedServer(w)
	s.Memory = true
	s.Tick = tick
	s.SubmitDelay = 5 * time.Millisecond
	if err := s.UseHerdr(v); err != nil {
		t.Fatal(err)
	}
	s.Start()
	return s
}

// Against the simulator, over its socket protocol: a confirmed send to an
// idle agent subscribes before the prompt (when it can), and is confirmed
// within a millisecond of the turn's start. Times are virtual (the
// simulator's round trips take none), so they are exact.
func TestEventWatchSimulator(t *testing.T) {
	tests := []struct {
		version string
		tick    time.Duration
		events  bool
		want    time.Duration // virtual time of the confirmed send, at most
	}{
		// 0.8.2 answers before Enter: the turn starts 6 ms after the
		// answer; the probe at the Enter herdr-link counts on (a third of
		// the 20 ms hold, 6.7 ms) sees it. 0.9 answers after Enter (5 ms),
		// the turn starts 1 ms later: the event on the next 1 ms tick, or
		// the probe 2 ms after the answer, sees it. With or without
		// events, on Herdr's 100 ms tick or a 1 ms one.
		{"0.8.2", time.Millisecond, true, 7 * time.Millisecond},
		{"0.8.2", time.Millisecond, false, 7 * time.Millisecond},
		{"0.8.2", 100 * time.Millisecond, true, 7 * time.Millisecond},
		{"0.8.2", 100 * time.Millisecond, false, 7 * time.Millisecond},
		{sockettest.NewestHerdr, time.Millisecond, true, 7 * time.Millisecond},
		{sockettest.NewestHerdr, time.Millisecond, false, 7 * time.Millisecond},
		{sockettest.NewestHerdr, 100 * time.Millisecond, true, 7 * time.Millisecond},
		{sockettest.NewestHerdr, 100 * time.Millisecond, false, 7 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/tick=%v/events=%v", tt.version, tt.tick, tt.events), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := simTarget(t, tt.version, tt.tick)
				defer s.Close()
				var h link.Herdr = link.SocketHerdr{Client: s.Client()}
				if !tt.events {
					h = noEvents{h}
				}
				self, _ := s.World.Agent("bench-self")
				l := mustLink(t, link.Config{Herdr: h, PaneID: self.PaneID, Delivery: link.DeliveryConfirm, Locker: newLocker(), SubmitHold: 20 * time.Millisecond})
				ctx := t.Context()
				if _, err := l.Peers(ctx); err != nil {
					t.Fatal(err)
				}
				s.ResetRequests()
				start := time.Now()
				res, err := l.Send(ctx, link.SendRequest{To: "bench-peer", Message: "hello"})
				took := time.Since(start)
				if err != nil || res.Delivery != link.DeliverySubmitted {
					t.Fatalf("send = %s, %v; want %s", res.Delivery, err, link.DeliverySubmitted)
				}
				if took > tt.want {
					t.Fatalf("confirmed after %v, want at most %v", took, tt.want)
				}
				var subs, prompt int
				for i, r := range s.Requests() {
					switch r.Method {
					case schema.MethodEventsSubscribe:
						subs++
						if prompt != 0 {
							t.Fatal("subscribed after the prompt")
						}
					case schema.MethodAgentPrompt:
						prompt = i + 1
					}
				}
				if want := map[bool]int{true: 1, false: 0}[tt.events]; subs != want {
					t.Fatalf("%d subscriptions, want %d", subs, want)
				}
				time.Sleep(2 * time.Second) // the turn ends
				synctest.Wait()
			})
		})
	}
}

// noEvents is a SocketHerdr that streams no events (it is no
// [link.PaneWatcher]); it still reports Herdr's version.
type noEvents struct{ link.Herdr }

func (n noEvents) HerdrVersion(ctx context.Context) (string, error) {
	return n.Herdr.(link.ServerInfoer).HerdrVersion(ctx)
}

// Herdr 0.9.2 and later end a stream that fell behind with events_lost:
// a confirmed send's stream is renewed, the target probed afresh, and the
// send is still confirmed, its text typed once.
func TestEventWatchRenewedAfterEventsLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := simTarget(t, sockettest.NewestModelled, time.Millisecond)
		defer s.Close()
		self, _ := s.World.Agent("bench-self")
		peer, _ := s.World.Agent("bench-peer")
		l := mustLink(t, link.Config{Herdr: link.SocketHerdr{Client: s.Client()}, PaneID: self.PaneID, Delivery: link.DeliveryConfirm,
			Locker: newLocker(), SubmitHold: 20 * time.Millisecond})
		ctx := t.Context()
		if _, err := l.Peers(ctx); err != nil {
			t.Fatal(err)
		}
		s.ResetRequests()
		stop := make(chan struct{})
		go func() { // every stream loses its events, again and again
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
					s.World.LoseEvents()
				}
			}
		}()
		res, err := l.Send(ctx, link.SendRequest{To: "bench-peer", Message: "hello"})
		close(stop)
		if err != nil || res.Delivery != link.DeliverySubmitted {
			t.Fatalf("send while events are lost = %s, %v; want %s", res.Delivery, err, link.DeliverySubmitted)
		}
		subs := 0
		for _, r := range s.Requests() {
			if r.Method == schema.MethodEventsSubscribe {
				subs++
			}
		}
		if subs < 2 {
			t.Errorf("%d subscriptions, want the stream renewed after events_lost", subs)
		}
		if n := len(s.World.Prompts(peer.PaneID)); n != 1 {
			t.Errorf("typed %d times, want once", n)
		}
		time.Sleep(2 * time.Second) // the turn ends
		synctest.Wait()
	})
}
