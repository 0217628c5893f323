package herdrstate

import (
	"sort"
	"sync"
	"time"
)

// A Clock is the time source of a [World]: the Enter Herdr sends after a
// prompt's text, the agents' turns and the queued submissions all run on
// it. The default is the real clock, which testing/synctest fakes inside a
// bubble; [FakeClock] is a manual one for tests that cannot run in a
// bubble (those that talk to the server over its socket). The server's
// own waiting (agent.wait, agent.prompt's effect gate, subscription ticks,
// read timeouts) stays on real time.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine (or, for a fake clock, from
	// Advance) once d has passed. stop cancels the call; it reports
	// whether the call was still pending.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// FakeClock is a [Clock] that moves only when told to. The zero value is
// not usable; create it with [NewFakeClock].
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers map[uint64]*fakeTimer
}

type fakeTimer struct {
	at  time.Time
	seq uint64
	f   func()
}

// NewFakeClock returns a fake clock reading start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, timers: map[uint64]*fakeTimer{}}
}

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f at Now()+d; it runs from [FakeClock.Advance].
func (c *FakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	id := c.seq
	c.timers[id] = &fakeTimer{at: c.now.Add(d), seq: id, f: f}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.timers[id]
		delete(c.timers, id)
		return ok
	}
}

// Advance moves the clock forward by d, running every call that falls due
// on the way, in time order (ties in scheduling order), each with the
// clock reading its due time. Calls scheduled by those calls run too when
// they fall within d. It must not be called from a scheduled call.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var due []*fakeTimer
		for _, t := range c.timers {
			if !t.at.After(end) {
				due = append(due, t)
			}
		}
		if len(due) == 0 {
			c.now = end
			c.mu.Unlock()
			return
		}
		sort.Slice(due, func(i, j int) bool {
			if !due[i].at.Equal(due[j].at) {
				return due[i].at.Before(due[j].at)
			}
			return due[i].seq < due[j].seq
		})
		next := due[0]
		delete(c.timers, next.seq)
		if next.at.After(c.now) {
			c.now = next.at
		}
		c.mu.Unlock()
		next.f()
	}
}

// Pending is how many scheduled calls have not run yet.
func (c *FakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}
