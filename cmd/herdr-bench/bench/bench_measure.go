package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"
)

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	if i < 0 {
		i = 0
	}
	return sorted[i]
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

type progress struct {
	w       io.Writer
	on      bool
	total   int
	done    int
	start   time.Time
	mu      sync.Mutex
	started bool
}

func (p *progress) step() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if !p.on || time.Since(p.start) < time.Second {
		return
	}
	p.started = true
	const width = 30
	f := float64(p.done) / float64(p.total)
	fmt.Fprintf(p.w, "\r  [%-*s] %3.0f%%", width, strings.Repeat("=", int(f*width)), f*100)
}

func (p *progress) finish() {
	if p.started {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// measure runs, op by op, warm-up then n rounds over freshly started
// routes in a shuffled order, and returns the samples, the simulator's
// connections per op and route and the server processes' CPU per call
// (µs, start-up excluded).
func measure(c benchConfig, t *target, rng *rand.Rand, base map[string]time.Duration, prog *progress) ([]sample, map[string]float64, map[string]float64, error) {
	ctx := context.Background()
	var samples []sample
	conns := map[string]float64{}
	cpu := map[string]float64{}
	var mu sync.Mutex
	for _, op := range c.ops {
		routes, err := openRoutes(t, c.routes, op)
		if err != nil {
			return nil, nil, nil, err
		}
		fail := func(err error) ([]sample, map[string]float64, map[string]float64, error) {
			closeRoutes(routes)
			return nil, nil, nil, err
		}
		for _, r := range routes {
			if r.skip[op] {
				continue
			}
			for i := 0; i < c.warmup; i++ {
				if err := r.run(ctx, op); err != nil {
					return fail(fmt.Errorf("%s %s warm-up: %w", r.name, op, err))
				}
			}
		}
		reqs := map[string]int{}
		for round := 0; round < (c.n+c.conc-1)/c.conc; round++ {
			for _, r := range shuffled(rng, routes) {
				if r.skip[op] {
					continue
				}
				before := 0
				var penalties int64
				if t.srv != nil {
					before = len(t.srv.Requests())
					penalties = t.srv.PollPenalties()
				}
				var wg sync.WaitGroup
				var firstErr error
				for k := 0; k < c.conc && round*c.conc+k < c.n; k++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						start := time.Now()
						err := r.run(ctx, op)
						d := time.Since(start)
						mu.Lock()
						defer mu.Unlock()
						if err != nil && firstErr == nil {
							firstErr = err
						}
						samples = append(samples, sample{op: op, route: r.name, d: d})
						prog.step()
					}()
				}
				wg.Wait()
				if firstErr != nil {
					return fail(fmt.Errorf("%s %s: %w", r.name, op, firstErr))
				}
				if t.srv != nil {
					reqs[r.name] += len(t.srv.Requests()) - before
					markPenalties(samples, r.name, op, t.srv.PollPenalties()-penalties)
					t.srv.ResetRequests()
				}
			}
		}
		closeRoutes(routes)
		for _, r := range routes {
			if r.proc != nil {
				cpu[op+"/"+r.name] = cpuPerCall(r, base[r.name])
			}
		}
		for name, n := range reqs {
			conns[op+"/"+name] = float64(n) / float64(c.n)
		}
	}
	return samples, conns, cpu, nil
}

func summarize(c benchConfig, samples []sample, conns, procs, cpu map[string]float64) []stat {
	var out []stat
	for _, op := range c.ops {
		var socketP50, floorP50, floorP99 float64
		for _, rn := range c.routes {
			var ds []time.Duration
			pen := 0
			var sum time.Duration
			for _, s := range samples {
				if s.op == op && s.route == rn {
					ds = append(ds, s.d)
					sum += s.d
					if s.penalty {
						pen++
					}
				}
			}
			if len(ds) == 0 {
				continue
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			st := stat{Op: op, Route: rn, N: len(ds), MinMS: ms(ds[0]), P50MS: ms(percentile(ds, 50)), P90MS: ms(percentile(ds, 90)),
				P99MS: ms(percentile(ds, 99)), MaxMS: ms(ds[len(ds)-1]), MeanNS: float64(sum.Nanoseconds()) / float64(len(ds)),
				ConnsPerOp: conns[op+"/"+rn], ProcsPerOp: procs[op+"/"+rn], Penalties: pen}
			st.CPUPerOpUS, st.HasCPU = cpu[op+"/"+rn]
			// Throughput: concurrency over mean latency.
			st.OpsPerSec = float64(c.conc) / (st.MeanNS / 1e9)
			switch rn {
			case "socket":
				socketP50 = st.P50MS
			case "floor":
				floorP50, floorP99 = st.P50MS, st.P99MS
			}
			out = append(out, st)
		}
		for i := range out {
			if out[i].Op == op && socketP50 > 0 {
				out[i].VsSocket = out[i].P50MS / socketP50
			}
			if out[i].Op == op && floorP50 > 0 {
				out[i].VsFloorP50, out[i].VsFloorP99 = out[i].P50MS/floorP50, out[i].P99MS/floorP99
			}
		}
	}
	return out
}

// markPenalties marks the last n samples of route and op (this round's) as
// having paid Herdr's first-read poll.
func markPenalties(samples []sample, route, op string, n int64) {
	for i := len(samples) - 1; n > 0 && i >= 0 && samples[i].route == route && samples[i].op == op; i-- {
		samples[i].penalty = true
		if int64(len(samples)-i) >= n {
			break
		}
	}
}
