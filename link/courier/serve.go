package courier

import (
	"sync"
	"time"
)

// maxParallel is how many targets the courier serves at once: each
// delivery holds its target's lock and watches for its turn (up to the
// confirmation budget), so one at a time would make every other target
// wait for it.
const maxParallel = 8

// serveDue calls serve for every item of m whose due time has come, up to
// parallel of them at once (different items only), sets each one's next
// due time from serve's answer or drops it when serve says it is done,
// and returns how long until the next item is due.
func serveDue[T any](m map[string]*T, due func(*T) *time.Time, serve func(*T) (time.Duration, bool), parallel int) time.Duration {
	wait := time.Hour
	type result struct {
		key  string
		next time.Duration
		keep bool
	}
	var keys []string
	for k, it := range m {
		if d := due(it); time.Now().Before(*d) {
			wait = min(wait, time.Until(*d))
			continue
		}
		keys = append(keys, k)
	}
	results := make([]result, len(keys))
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for i, k := range keys {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			next, keep := serve(m[k])
			results[i] = result{k, next, keep}
		}()
	}
	wg.Wait()
	for _, r := range results {
		if !r.keep {
			delete(m, r.key)
			continue
		}
		*due(m[r.key]) = time.Now().Add(r.next)
		wait = min(wait, r.next)
	}
	return wait
}
