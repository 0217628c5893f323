package courier

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// serveDue serves only the items that are due, at most parallel at once,
// drops those that are done, sets the others' next due time, and says how
// long until the first of them.
func TestServeDue(t *testing.T) { synctest.Test(t, testServeDue) }

func testServeDue(t *testing.T) {
	type item struct {
		due  time.Time
		next time.Duration
		keep bool
	}
	now := time.Now()
	m := map[string]*item{
		"a": {next: 3 * time.Second, keep: true},
		"b": {next: time.Second, keep: true},
		"c": {keep: false},
		"d": {due: now.Add(2 * time.Second), keep: true},
	}
	var mu sync.Mutex
	var served []string
	inside, most := 0, 0
	wait := serveDue(m, func(it *item) *time.Time { return &it.due }, func(it *item) (time.Duration, bool) {
		mu.Lock()
		inside++
		most = max(most, inside)
		for k, v := range m {
			if v == it {
				served = append(served, k)
			}
		}
		mu.Unlock()
		time.Sleep(time.Millisecond) // in the bubble: the others start meanwhile
		mu.Lock()
		inside--
		mu.Unlock()
		return it.next, it.keep
	}, 2)
	if len(served) != 3 {
		t.Errorf("served %v, want a, b and c (d is not due)", served)
	}
	if most > 2 {
		t.Errorf("got %d at once, want at most 2", most)
	}
	if _, ok := m["c"]; ok {
		t.Error("c is done and still there")
	}
	if got, want := wait, time.Second; got != want {
		t.Errorf("wait: got %v, want %v", got, want)
	}
	if got, want := m["b"].due, time.Now().Add(time.Second); !got.Equal(want) {
		t.Errorf("b due: got %v, want %v", got, want)
	}
	if got, want := m["d"].due, now.Add(2*time.Second); !got.Equal(want) {
		t.Errorf("d due: got %v, want %v (not served)", got, want)
	}
}
