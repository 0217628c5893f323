package herdrlink

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Large answers in a burst free memory once, a delay after the last.
func TestReleaserDebounces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var freed atomic.Int32
		r := &releaser{delay: time.Second, free: func() { freed.Add(1) }}
		for range 3 {
			r.soon()
			time.Sleep(600 * time.Millisecond)
		}
		if n := freed.Load(); n != 0 {
			t.Fatalf("freed %d times during the burst", n)
		}
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		if n := freed.Load(); n != 1 {
			t.Fatalf("freed %d times after the burst, want 1", n)
		}
		r.soon()
		time.Sleep(time.Second)
		synctest.Wait()
		if n := freed.Load(); n != 2 {
			t.Fatalf("freed %d times after a second answer, want 2", n)
		}
	})
}
