package mcpserver

import "sync"

// workers run tool calls. A call used to start a goroutine of its own,
// which grew its stack through the JSON decoders on every call (4–5 % of
// a peers call's CPU time in the profile); a worker keeps its grown stack
// and waits for the next call. A call that finds no idle worker starts a
// new one, so calls never wait for each other and a ping is never behind
// them (the read loop only hands calls over).
type workers struct {
	ch   chan func()
	done chan struct{}
	wg   sync.WaitGroup
}

func newWorkers() *workers {
	return &workers{ch: make(chan func()), done: make(chan struct{})}
}

// run runs f on an idle worker, or on a new one.
func (w *workers) run(f func()) {
	select {
	case w.ch <- f:
	default:
		w.wg.Add(1)
		go w.loop(f)
	}
}

func (w *workers) loop(f func()) {
	defer w.wg.Done()
	for {
		f()
		select {
		case f = <-w.ch:
		case <-w.done:
			return
		}
	}
}

// stop ends the workers and waits for them: each idle one at once, each
// busy one when its call returns.
func (w *workers) stop() {
	close(w.done)
	w.wg.Wait()
}
