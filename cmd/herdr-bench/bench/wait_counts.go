package bench

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link"
)

// countsWorking is the number of working targets of the counts
// scenario's sends (w0…), and of the targets its stores are filled for
// (the next as many): the measured sends find nothing held for their
// target before, whatever the store holds, and 1,000 held messages stay
// under the per-target bound (64).
const countsWorking = 40

// waitState is one store of the counts scenario: its server, and what
// its store was filled with.
type waitState struct {
	name string
	s    *waitServer
}

// waitCounts measures held sends and peers with stores of each size in
// sizes, filled with held messages and with pending requests, calls
// interleaved across the stores.
func waitCounts(exe string, n int, sizes []int, out io.Writer) error {
	var states []waitState
	defer func() {
		for _, st := range states {
			st.s.close()
		}
	}()
	add := func(name string, fill func(*waitServer) error) error {
		w, err := holdWorld(0, 2*countsWorking)
		if err != nil {
			return err
		}
		s, err := startWait(exe, w)
		if err != nil {
			return err
		}
		states = append(states, waitState{name, s})
		return fill(s)
	}
	if err := add("empty store", func(*waitServer) error { return nil }); err != nil {
		return err
	}
	for _, size := range sizes {
		if size == 0 {
			continue
		}
		if err := add(fmt.Sprintf("%d held", size), func(s *waitServer) error { return fillStore(s, size, false) }); err != nil {
			return err
		}
		if err := add(fmt.Sprintf("%d pending", size), func(s *waitServer) error { return fillStore(s, size, true) }); err != nil {
			return err
		}
	}
	const warm = 10
	held := make([][]time.Duration, len(states))
	peers := make([][]time.Duration, len(states))
	for i := range n + warm {
		for k, st := range states {
			to := fmt.Sprintf("w%d", i%countsWorking)
			id, d, el, err := st.s.call("herdr_link_send", waitSendArgs{To: to, Message: benchMessage})
			if err != nil {
				return fmt.Errorf("%s: held send: %w", st.name, err)
			}
			if d != "held" {
				return fmt.Errorf("%s: send to a working target: delivery %q, want held", st.name, d)
			}
			// The store keeps its size: the measured message and its
			// request leave it again.
			if err := unhold(st.s.store, id); err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
			_, _, pe, err := st.s.call("herdr_link_peers", struct{}{})
			if err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
			if i >= warm {
				held[k] = append(held[k], el)
				peers[k] = append(peers[k], pe)
			}
		}
	}
	fmt.Fprintf(out, "held sends (to a working target) and herdr_link_peers by what the store holds (other agents' entries), interleaved:\n")
	var h0, p0 time.Duration
	for k, st := range states {
		h, p := holdSummary(held[k]), holdSummary(peers[k])
		if k == 0 {
			h0, p0 = h.p50, p.p50
		}
		fmt.Fprintf(out, "  %-14s held send p50 %6.2f ms p90 %6.2f ms (%.2f× empty)   peers p50 %6.2f ms p90 %6.2f ms (%.2f× empty)\n",
			st.name, holdMS(h.p50), holdMS(h.p90), float64(h.p50)/float64(max(h0, 1)), holdMS(p.p50), holdMS(p.p90), float64(p.p50)/float64(max(p0, 1)))
	}
	fmt.Fprintln(out)
	return nil
}

// fillStore adds size entries to s's store, as other agents' servers
// would have: held messages (pending requests when requests) from ten
// senders elsewhere to the working targets the measured sends do not go
// to. The bench process owns them
// (it is alive), so s's courier leaves them alone.
func fillStore(s *waitServer, size int, requests bool) error {
	now := time.Now()
	self, _ := s.world.Agent("bench-self")
	for i := range size {
		name := fmt.Sprintf("w%d", countsWorking+i%countsWorking)
		a, ok := s.world.Agent(name)
		if !ok {
			return fmt.Errorf("no agent %s", name)
		}
		id := link.NewMessageID(now)
		from := fmt.Sprintf("other%d", i%10)
		key := a.TerminalID
		if key == "" {
			key = "pane:" + a.PaneID
		}
		kind := ""
		if a.Agent != nil {
			kind = *a.Agent
		}
		var err error
		if requests {
			_, err = s.store.AddRequest(outbox.Request{ID: id, Expires: now.Add(time.Hour), To: *a.Name, From: from,
				TargetKey: key, FromKey: "bench:" + from, PaneID: a.PaneID, TerminalID: a.TerminalID, Kind: kind,
				WorkspaceID: a.WorkspaceID, FromPane: self.PaneID}, now)
		} else {
			_, err = s.store.Add(outbox.Message{ID: id, Expires: now.Add(time.Hour), To: *a.Name, From: from,
				TargetKey: key, FromKey: "bench:" + from, PaneID: a.PaneID, TerminalID: a.TerminalID, Kind: kind,
				WorkspaceID: a.WorkspaceID, FromPane: self.PaneID, Text: benchMessage}, now)
		}
		if err != nil {
			return fmt.Errorf("filling the store: %w", err)
		}
	}
	return nil
}

// unhold removes held message id and its request record from st.
func unhold(st *outbox.Store, id string) error {
	e, err := st.Find(id)
	if err != nil {
		return fmt.Errorf("held message %s: %w", id, err)
	}
	m, err := st.Read(e)
	if err != nil {
		return err
	}
	if err := st.Done(m); err != nil {
		return err
	}
	if e, err := st.FindRequest(id); err == nil {
		if r, err := st.Request(e); err == nil {
			return st.ForgetRequest(r)
		}
	}
	return nil
}

// waitIdle measures the CPU of an idle server and of the simulator (this
// process, which does nothing else meanwhile) over window: first with no
// request pending, then with pending requests spread over targets
// working targets (typed with when now: a working agent queues them, and
// they stay pending while it works).
func waitIdle(exe string, pending, targets int, window time.Duration, out io.Writer) error {
	w, err := holdWorld(0, targets)
	if err != nil {
		return err
	}
	s, err := startWait(exe, w)
	if err != nil {
		return err
	}
	defer s.close()
	measure := func(what string) error {
		time.Sleep(3 * time.Second) // the courier's next scan and first probes
		srv0, err := s.cpu()
		if err != nil {
			fmt.Fprintf(out, "idle server %s: CPU not measured (%v)\n", what, err)
			return nil
		}
		sim0, err := procCPU(os.Getpid())
		if err != nil {
			return err
		}
		time.Sleep(window)
		srv1, err := s.cpu()
		if err != nil {
			return err
		}
		sim1, err := procCPU(os.Getpid())
		if err != nil {
			return err
		}
		pct := func(d time.Duration) float64 { return 100 * d.Seconds() / window.Seconds() }
		fmt.Fprintf(out, "  %-42s server %5.2f %% of a core, simulator %5.2f %% (over %v)\n", what, pct(srv1-srv0), pct(sim1-sim0), window)
		return nil
	}
	fmt.Fprintf(out, "idle CPU (user+system):\n")
	if err := measure("no request pending"); err != nil {
		return err
	}
	for i := range pending {
		if _, _, _, err := s.call("herdr_link_send", waitSendArgs{To: fmt.Sprintf("w%d", i%targets), Message: benchMessage, When: "now"}); err != nil {
			return fmt.Errorf("request to a working target: %w", err)
		}
	}
	if err := measure(fmt.Sprintf("%d requests pending to %d working targets", pending, targets)); err != nil {
		return err
	}
	fmt.Fprintln(out)
	return nil
}
