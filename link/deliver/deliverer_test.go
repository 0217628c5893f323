package deliver_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/link/deliver"
	"github.com/herdr-link/herdr-link/socket"
)

// TestWaitCountsHolds: Wait returns once every lock released after its
// hold and every background write is over, and not before.
func TestWaitCountsHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := deliver.New(deliver.Config{})
		start := time.Now()
		released := false
		d.ReleaseAfter(start, 400*time.Millisecond, func() { released = true })
		wrote := make(chan struct{})
		d.Background(func() {
			time.Sleep(time.Second)
			close(wrote)
		})
		if err := d.Wait(t.Context()); err != nil {
			t.Fatalf("Wait: got %v, want nil", err)
		}
		if !released {
			t.Error("Wait returned with the lock still held: got released false, want true")
		}
		select {
		case <-wrote:
		default:
			t.Error("Wait returned before the background write ended")
		}
		if got, want := time.Since(start), time.Second; got != want {
			t.Errorf("Wait returned after %v, want %v", got, want)
		}
	})
}

// TestReleaseAfterPast: a hold already over releases the lock at once,
// and leaves nothing for Wait.
func TestReleaseAfterPast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := deliver.New(deliver.Config{})
		released := false
		d.ReleaseAfter(time.Now().Add(-time.Second), 400*time.Millisecond, func() { released = true })
		if !released {
			t.Error("got released false, want true")
		}
		start := time.Now()
		if err := d.Wait(t.Context()); err != nil || time.Since(start) != 0 {
			t.Errorf("Wait: got %v after %v, want nil at once", err, time.Since(start))
		}
	})
}

// TestWaitEndsWithContext: a hold that outlasts the caller's context
// gives back the context's error.
func TestWaitEndsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := deliver.New(deliver.Config{})
		d.ReleaseAfter(time.Now(), time.Minute, func() {})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := d.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Wait: got %v, want %v", err, context.DeadlineExceeded)
		}
		if err := d.Wait(t.Context()); err != nil {
			t.Errorf("second Wait: got %v, want nil", err)
		}
	})
}

// TestSubmitHold: the Config's hold, or SubmitHold when it is zero.
func TestSubmitHold(t *testing.T) {
	for _, tc := range []struct {
		cfg  time.Duration
		want time.Duration
	}{
		{0, deliver.SubmitHold},
		{50 * time.Millisecond, 50 * time.Millisecond},
	} {
		if got := deliver.New(deliver.Config{SubmitHold: tc.cfg}).SubmitHold(); got != tc.want {
			t.Errorf("SubmitHold with %v: got %v, want %v", tc.cfg, got, tc.want)
		}
	}
}

// deadlineWatcher records how long the context of each subscription has
// left, and refuses it.
type deadlineWatcher struct{ left []time.Duration }

func (w *deadlineWatcher) WatchPanes(ctx context.Context, _ []string) (deliver.PaneEvents, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		w.left = append(w.left, -1)
	} else {
		w.left = append(w.left, time.Until(dl))
	}
	return nil, errors.New("fake: no events")
}

// TestCallTimeoutDefault: a Config without CallTimeout bounds each Herdr
// call by the socket's default, as its other zero durations take theirs,
// and never by an operation deadline already over.
func TestCallTimeoutDefault(t *testing.T) {
	for _, tc := range []struct {
		cfg, want time.Duration
	}{
		{0, socket.DefaultTimeout},
		{2 * time.Second, 2 * time.Second},
	} {
		synctest.Test(t, func(t *testing.T) {
			w := &deadlineWatcher{}
			deliver.New(deliver.Config{CallTimeout: tc.cfg}).FollowPanes(t.Context(), w, []string{"w1:p1"}, func(string) {})
			if len(w.left) != 1 || w.left[0] != tc.want {
				t.Errorf("CallTimeout %v: subscription deadlines %v, want [%v]", tc.cfg, w.left, tc.want)
			}
		})
	}
}
