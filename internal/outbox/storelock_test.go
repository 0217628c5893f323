package outbox

import (
	"testing"
	"testing/synctest"
	"time"
)

// A goroutine waiting for the store's lock while its holder sleeps (the
// journal's flock retries) must not stop a synctest bubble's clock: with
// a sync.Mutex the sleep never ends and the test hangs.
func TestStoreLockWaiterKeepsTheClock(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		synctest.Test(t, func(t *testing.T) {
			var s Store
			s.mu.Lock()
			waited := make(chan struct{})
			got := 0
			go func() {
				s.mu.Lock()
				got++ // after the holder's Unlock
				s.mu.Unlock()
				close(waited)
			}()
			time.Sleep(time.Second) // the holder's retry pause
			s.mu.Unlock()
			<-waited
			if got != 1 {
				t.Errorf("got %d passes of the waiter, want 1", got)
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("got a bubble whose clock stopped (the waiter blocked it), want the sleep to end")
	}
}
