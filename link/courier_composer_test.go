package link_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/link"
)

// dialogHerdr shows a screen with no composer (a dialog) while dialog is
// set, the simulator's screen otherwise.
type dialogHerdr struct {
	link.SocketHerdr
	dialog *atomic.Bool
}

func (h dialogHerdr) ReadScreen(ctx context.Context, pane string) (string, error) {
	if h.dialog.Load() {
		return " Quick safety check: Is this a project you trust?\n ❯ No, exit\n   Yes, I trust this folder\n Enter to confirm · Esc to cancel\n", nil
	}
	return h.SocketHerdr.ReadScreen(ctx, pane)
}

// A held message for a Claude Code that Herdr reports idle but whose
// screen shows no composer yet (a TUI drawing itself after a dialog) waits
// for the composer; one that never shows is typed after 5 s.
func TestHeldWaitsForTheComposer(t *testing.T) {
	for _, tt := range []struct {
		name    string
		appears time.Duration // when the composer shows (0: never)
		typedBy time.Duration
	}{
		{"composer back after 2 s", 2 * time.Second, 4 * time.Second},
		{"no composer", 0, 7 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newCourierEnv(t)
				brain := e.link(t, "w1:p1")
				var dialog atomic.Bool
				dialog.Store(true)
				brain = relink(t, brain, func(c *link.Config) { c.Herdr = dialogHerdr{brain.Config().Herdr.(link.SocketHerdr), &dialog} })
				r := mustSend(t, brain, link.SendRequest{To: "stuck", Message: "when you can"})
				if r.Delivery != link.DeliveryHeld {
					t.Fatalf("send to a blocked agent: got %s, want held", r.Delivery)
				}
				run(t, brain)
				if err := e.w.SetStatus("w1:p5", "idle"); err != nil {
					t.Fatal(err)
				}
				begin := time.Now()
				if tt.appears > 0 {
					time.Sleep(tt.appears)
					if n := len(e.w.Submissions("w1:p5")); n != 0 {
						t.Fatalf("typed while no composer showed: got %d turns, want 0", n)
					}
					dialog.Store(false)
				}
				for len(e.w.Submissions("w1:p5")) == 0 && time.Since(begin) < 10*time.Second {
					time.Sleep(50 * time.Millisecond)
				}
				took := time.Since(begin)
				if len(e.w.Submissions("w1:p5")) != 1 || took > tt.typedBy || tt.appears == 0 && took < 5*time.Second {
					t.Fatalf("typed after %v (%d turns), want one turn by %v", took, len(e.w.Submissions("w1:p5")), tt.typedBy)
				}
			})
		})
	}
}
