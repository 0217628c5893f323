package deliver

import (
	"context"
	"errors"
	"time"
)

// Timing of the confirmation watch.
const (
	// confirmPoll is the spacing of agent.get probes while watching.
	confirmPoll = 50 * time.Millisecond
	// probeRamp is the first gap between probes after Herdr's Enter; it
	// doubles up to confirmPoll.
	probeRamp = 2 * time.Millisecond
)

// detach returns a context for the confirmation watch: it has its own
// budget, outside the call's deadline, and still ends when the call is
// cancelled.
func detach(ctx context.Context, budget time.Duration) (context.Context, context.CancelFunc) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			cancel()
		}
	})
	return wctx, func() { stop(); cancel() }
}

// confirm watches the target after Herdr accepted a prompt (before is the
// agent as Herdr's answer showed it) and returns the delivery value. ev,
// when not nil, is the target's status stream opened before the prompt:
// each change it reports after Herdr's Enter probes the target at once.
func (d *Deliverer) confirm(ctx context.Context, afterEnter bool, target, before Agent, textBytes int, ev *eventWatch) string {
	working := State(before.Status) == "working"
	if working {
		if b := WorkingBehaviour(kindOf(target, before)); b != "" {
			return b
		}
	}
	// Herdr types Enter after the text: no turn can start before, so a
	// state change seen until then is not a submission (a flap). A Herdr
	// that answers after its Enter has typed it already.
	enter := time.Now()
	if !afterEnter {
		enter = enter.Add(d.enterAfter())
	}
	wctx, cancel := detach(ctx, d.cfg.Budget(textBytes))
	defer cancel()
	if d.watch(wctx, target, before, working, enter, afterEnter, ev.wake(wctx)) {
		return DeliverySubmitted
	}
	if ctx.Err() == nil && d.stillInComposer(ctx, target, before) {
		return DeliveryNotSubmitted
	}
	return DeliveryUnconfirmed
}

// stillInComposer is the one check an unconfirmed delivery passes before
// it is reported (a `now` send's answer, a held message's end): run
// after a watch that saw no turn, still under the target's delivery lock
// (so no other delivery typed since), it reports whether the target's
// screen shows text in its composer. The occupant must be the one typed
// into and not working (a working agent may show input it is about to
// take). A kind whose composer cannot be read, a screen that shows no
// composer (a dialog drawn over it), or a probe that fails is "cannot
// tell": false, and the delivery stays unconfirmed.
func (d *Deliverer) stillInComposer(ctx context.Context, target, before Agent) bool {
	kind := kindOf(target, before)
	if !d.cfg.Ports.Readable(kind) {
		return false
	}
	cctx, cancel := detach(ctx, d.cfg.CallTimeout)
	defer cancel()
	a, err := d.cfg.Herdr.GetAgent(cctx, target.PaneID)
	if err != nil || !sameTenant(before, a) || State(a.Status) == "working" {
		return false
	}
	if !d.cfg.Ports.Draft(cctx, Agent{PaneID: target.PaneID, Kind: kind}) {
		return false
	}
	d.log.Warn("typed but not submitted: the text is still in the target's composer", "pane_id", target.PaneID, "kind", kind, "status", a.Status)
	return true
}

func kindOf(target, before Agent) string {
	if before.Kind != "" {
		return before.Kind
	}
	return target.Kind
}

// enterAfter is when, after Herdr's answer, its Enter is typed at the
// earliest: the hold less 100 ms (Herdr: 300 ms of a 400 ms hold), and at
// least a third of a shorter hold (a simulator's).
func (d *Deliverer) enterAfter() time.Duration {
	h := d.SubmitHold()
	return max(h-100*time.Millisecond, h/3)
}

// SeqSteps is how far state_change_seq moved from then to now, wrap-safe:
// a counter near 2^64 that wraps moved forward; one that went back (a
// restarted Herdr) counts as one step.
func SeqSteps(then, now uint64) uint64 {
	d := now - then
	if d >= 1<<63 {
		return 1
	}
	return d
}

// watch probes the target until it shows a new turn (true) or ctx ends
// (false). A new turn is a change of state_change_seq to working or
// blocked, or two changes between probes. A target that was working must
// be seen at rest first (its running turn ended). No turn starts before
// Herdr's Enter (enter): a change seen earlier decides nothing. If it is
// back at rest by then it was a detection flap and only moved the
// baseline; if the agent is still busy at the first probe after the
// Enter, a turn is running. Another occupant of the pane (a new terminal,
// or another agent kind in it) ends the watch: the text's fate is
// unknown.
//
// Before the Enter, probes are confirmPoll apart, and one comes at the
// Enter. After it they come closer first, when a turn most likely starts
// (probeRamp: 2, 4, 8, 16, 32 ms apart), then confirmPoll apart. A
// status change on wake (the target's event stream) probes at once after
// the Enter: an event carries no state_change_seq nor terminal id, so the
// probe, not the event, decides, by the same rules. (Before the Enter an
// event probes nothing: the probe at the Enter follows, and a probe then
// would move the baseline, so that a short turn which Herdr's Enter, a
// little before the one counted on, started would pass for a flap.) A
// stream that ends leaves the probes. The probes go on with a stream:
// Herdr writes events on a 100 ms tick.
func (d *Deliverer) watch(ctx context.Context, target, before Agent, working bool, enter time.Time, now bool, wake <-chan struct{}) bool {
	sawRest := !working
	seq := before.Seq
	pending := false // busy since a change seen before the Enter
	t := time.NewTimer(max(0, min(firstProbe(now), time.Until(enter))))
	defer t.Stop()
	gap := probeRamp // the next gap after the Enter
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		case _, ok := <-wake:
			if !ok {
				wake = nil // the stream ended: probes only
				continue
			}
			if time.Now().Before(enter) {
				continue // the probe at the Enter follows
			}
		}
		early := time.Now().Before(enter)
		a, err := d.cfg.Herdr.GetAgent(ctx, target.PaneID)
		if err != nil || !sameTenant(before, a) {
			// Gone, moved or replaced, or Herdr stopped answering: the
			// text was accepted, its fate is unknown.
			d.log.Debug("delivery watch ended", "pane_id", target.PaneID, "err", err, "kind", a.Kind)
			return false
		}
		st := State(a.Status)
		busy := st == "working" || st == "blocked"
		n := SeqSteps(seq, a.Seq)
		switch {
		case early:
			if n != 0 {
				seq, pending = a.Seq, busy && sawRest
				sawRest = sawRest || !busy
			}
		case pending && busy:
			return true
		case n >= 2 && (sawRest || busy):
			// At least two changes between two probes: a turn started
			// (and maybe ended already), or the running turn ended and
			// a new one began.
			return true
		case n != 0 && sawRest && busy:
			return true
		case n != 0 && !busy:
			// At rest: a detection change (unknown → idle), a flap that
			// ended, or the end of the running turn. Count from here.
			sawRest, seq = true, a.Seq
		}
		next := confirmPoll
		if early {
			next = min(next, time.Until(enter))
		} else {
			pending = false
			next, gap = gap, min(2*gap, confirmPoll)
		}
		t.Reset(next)
	}
}

// sameTenant reports whether a probe still shows the agent the prompt
// reached: the same terminal and the same agent kind (§12: another kind
// in the same terminal is another occupant).
func sameTenant(before, a Agent) bool {
	if before.TerminalID != "" && a.TerminalID != before.TerminalID {
		return false
	}
	return before.Kind == "" || a.Kind == before.Kind
}

// promptSubmitDelay is Herdr's delay between a prompt's text and its
// Enter (AGENT_PROMPT_SUBMIT_DELAY, 300 ms in 0.8.2 and 0.9.x).
const promptSubmitDelay = 300 * time.Millisecond

// holdAfterAnswer is how long the delivery lock is kept after Herdr's
// answer. A Herdr that answers after Enter needs none — provided the
// answer took at least Herdr's submit delay since the request was sent:
// an answer sooner than that cannot have waited for the Enter, so that
// Herdr answers before it after all and gets 0.8.2's hold.
func (d *Deliverer) holdAfterAnswer(afterEnter bool, sent, answered time.Time) time.Duration {
	if afterEnter && answered.Sub(sent) >= d.submitDelay() {
		return 0
	}
	return d.SubmitHold()
}

// submitDelay is the least time an after-Enter answer takes: Herdr's
// 300 ms, scaled with -submit-hold for simulators with a shorter delay.
func (d *Deliverer) submitDelay() time.Duration {
	if d.cfg.SubmitHold > 0 && d.cfg.SubmitHold < SubmitHold {
		return d.cfg.SubmitHold * promptSubmitDelay / SubmitHold
	}
	return promptSubmitDelay
}

// firstProbe is when the confirmation watch first probes: at once when
// Herdr answered after Enter (the turn may have begun already), else one
// poll after the answer.
func firstProbe(afterEnter bool) time.Duration {
	if afterEnter {
		return 0
	}
	return confirmPoll
}
