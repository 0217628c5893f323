package herdrlink

import (
	"runtime/debug"
	"sync"
	"time"
)

// releaseDelay is how long after the last large answer the server returns
// memory to the system: the calls that read it are done by then.
const releaseDelay = time.Second

// releaser returns the memory of large answers to the system a while
// after the last one (socket.Client.AfterLargeAnswer), instead of leaving
// it with the process until the runtime's scavenger gets to it: the
// server idles in a pane for hours after one large agent list.
type releaser struct {
	delay time.Duration
	free  func() // debug.FreeOSMemory
	mu    sync.Mutex
	timer *time.Timer
}

func newReleaser() *releaser { return &releaser{delay: releaseDelay, free: debug.FreeOSMemory} }

// soon schedules free after delay, pushing back one already scheduled.
func (r *releaser) soon() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer != nil {
		r.timer.Reset(r.delay)
		return
	}
	r.timer = time.AfterFunc(r.delay, func() {
		r.mu.Lock()
		r.timer = nil
		r.mu.Unlock()
		r.free()
	})
}
