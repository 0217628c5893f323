package courier

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/herdr-link/herdr-link/link/deliver"
)

// paneWaker keeps one event subscription on the panes the courier waits
// for, and sends a pane id on wake for each change.
type paneWaker struct {
	c      *Courier
	wake   chan string
	panes  []string
	cancel context.CancelFunc
	dead   *atomic.Bool // set when the current stream ended
}

func (w *paneWaker) watch(ctx context.Context, panes []string) {
	pw, ok := w.c.cfg.Herdr.(deliver.PaneWatcher)
	if !ok {
		return
	}
	slices.Sort(panes)
	panes = slices.Compact(panes)
	// A stream of more panes than needed is kept (the events of the
	// others wake nothing), unless it grew to twice what is needed: a
	// target that is done does not cost a new subscription each time.
	live := w.cancel != nil && !w.dead.Load()
	if live && len(panes) > 0 && len(w.panes) <= 2*len(panes)+8 && subset(panes, w.panes) {
		return
	}
	w.stop()
	w.panes = panes
	if len(panes) == 0 {
		return
	}
	sctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	dead := new(atomic.Bool)
	w.dead = dead
	go func() {
		defer dead.Store(true)
		w.c.d.FollowPanes(sctx, pw, panes, func(pane string) {
			select {
			case w.wake <- pane:
			default:
			}
		})
	}()
}

// subset reports whether every element of the sorted a is in the
// sorted b.
func subset(a, b []string) bool {
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			return false
		}
	}
	return true
}

func (w *paneWaker) stop() {
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
	w.panes = nil
}
