package tui_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/herdr-link/herdr-link/link"
)

// Scenario is one delivery situation; the same table runs against the
// real TUIs and against the simulator's modelled receiving end.
type Scenario struct {
	Name string
	// Draft is typed into the target's composer (unsent) first.
	Draft string
	// Working: the target is in the middle of a turn (the fake streams
	// slowly) when the messages arrive.
	Working bool
	// Senders is how many herdr-link processes send at once (1 if 0).
	Senders int
	// Size is the message size in bytes (a short line if 0).
	Size int
}

func (sc Scenario) senders() int { return max(sc.Senders, 1) }

// label names the scenario in the summary, with its message size when set.
func (sc Scenario) label() string {
	if sc.Size == 0 {
		return sc.Name
	}
	return fmt.Sprintf("%s %dK", sc.Name, sc.Size>>10)
}

// Scenarios is the table.
var Scenarios = []Scenario{
	{Name: "idle"},
	{Name: "working", Working: true},
	{Name: "two-senders", Senders: 2},
	{Name: "draft", Draft: "half typed draft"},
	{Name: "large", Size: 64 << 10},
}

// ScenariosFor is the table for a target of kind: the large message is
// 64 KiB, or for a kind with a typed limit ([link.TypedLimit]: its TUI
// loses larger pastes now and then) the largest message herdr-link types
// into it, with a margin for the wrapper.
func ScenariosFor(kind string) []Scenario {
	out := slices.Clone(Scenarios)
	for i, sc := range out {
		if limit := link.TypedLimit(kind); limit > 0 && sc.Size > limit-1024 {
			out[i].Size = limit - 1024
		}
	}
	return out
}

// Outcome is what became of a scenario's messages.
type Outcome struct {
	// Submitted: every message reached the model.
	Submitted bool
	// Separate: no turn holds two of the messages.
	Separate bool
	// Intact: each message's wrapper (envelope included) reached the
	// model whole.
	Intact bool
	// Queued: (working) the message waited for the running turn to end.
	// Interrupting: the running turn's answer was dropped for it.
	Queued, Interrupting bool
	// DraftMerged: the user's draft went into the message's turn.
	DraftMerged bool
	// Lost and Duplicated count messages that never reached the model and
	// extra turns holding one.
	Lost, Duplicated int
	// Delivery is what herdr-link reported for each send ("" if nothing).
	Delivery []string
}

func (o Outcome) String() string {
	return fmt.Sprintf("submitted=%v separate=%v intact=%v queued=%v interrupting=%v draft_merged=%v lost=%d duplicated=%d delivery=%q",
		o.Submitted, o.Separate, o.Intact, o.Queued, o.Interrupting, o.DraftMerged, o.Lost, o.Duplicated, o.Delivery)
}

// diff lists how o differs from want on the behaviours the scenario
// table states; with delivery, also the delivery values herdr-link
// reported (when it reports them).
func (o Outcome) diff(want Outcome, delivery bool) []string {
	var d []string
	check := func(name string, got, w bool) {
		if got != w {
			d = append(d, fmt.Sprintf("%s is %v, want %v", name, got, w))
		}
	}
	check("submitted", o.Submitted, want.Submitted)
	check("separate (not merged)", o.Separate, want.Separate)
	check("intact", o.Intact, want.Intact)
	check("queued", o.Queued, want.Queued)
	check("interrupting", o.Interrupting, want.Interrupting)
	check("draft merged", o.DraftMerged, want.DraftMerged)
	if o.Lost != want.Lost || o.Duplicated != want.Duplicated {
		d = append(d, fmt.Sprintf("lost %d duplicated %d, want %d %d", o.Lost, o.Duplicated, want.Lost, want.Duplicated))
	}
	if delivery && strings.Join(o.Delivery, "") != "" && !sameValues(o.Delivery, want.Delivery) {
		d = append(d, fmt.Sprintf("herdr-link reported delivery %q, want %q", o.Delivery, want.Delivery))
	}
	return d
}

// extracts reports whether herdr-link's extraction finds the envelope
// with id in text.
func extracts(text, id string) bool {
	for _, e := range link.ExtractAll(text) {
		if e.ID == id {
			return true
		}
	}
	return false
}

// sameValues compares two lists of delivery values in any order (which
// of two concurrent senders goes first is up to the race).
func sameValues(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// Expected is the scenario table: what each host does with herdr-link's
// messages (and the one-delivery-per-pane rule for two senders).
func Expected(host string, sc Scenario) Outcome {
	if host == "grok" {
		return expectedGrok(sc)
	}
	o := Outcome{Submitted: true, Separate: true, Intact: true}
	d := "submitted"
	if sc.Working {
		if host == "codex" {
			o.Interrupting, d = true, "interrupting"
		} else {
			o.Queued, d = true, "queued"
		}
	}
	o.DraftMerged = sc.Draft != ""
	for i := range sc.senders() {
		if i == 0 {
			o.Delivery = append(o.Delivery, d)
			continue
		}
		// herdr-link's per-pane lock holds a later sender until the first
		// delivery's turn has started: it then meets a working target
		// (Claude Code queues it, Codex steers with it).
		if host == "codex" {
			o.Delivery = append(o.Delivery, "interrupting")
		} else {
			o.Delivery = append(o.Delivery, "queued")
		}
	}
	return o
}

// expectedGrok is Grok CLI 0.0.34's row (typed raw, no bracketed
// paste): a message typed while it works starts a turn of its own at
// once, beside the running one (neither queued nor steering; herdr-link,
// seeing no new turn in Herdr's status, reports it unconfirmed, as it
// does a later sender's). Its large row is its typed limit's (Herdr's
// Enter 300 ms after 15 or 64 KiB came while Grok was still reading the
// text, and the message stayed in the composer).
func expectedGrok(sc Scenario) Outcome {
	o := Outcome{Submitted: true, Separate: true, Intact: true, DraftMerged: sc.Draft != ""}
	d := "submitted"
	if sc.Working {
		d = "unconfirmed"
	}
	o.Delivery = append(o.Delivery, d)
	for range sc.senders() - 1 {
		o.Delivery = append(o.Delivery, "unconfirmed")
	}
	return o
}

// record is what a receiving end made of a scenario, in the terms both
// the real TUIs (the model requests) and the simulator's model (its
// submissions) give: the turns the model received, in order.
type record struct {
	turns []turnRec
	// busy is the index of the turn the target was working on when the
	// messages came (-1: it was idle); busyCut says that turn's answer
	// was dropped (a steer).
	busy    int
	busyCut bool
}

type turnRec struct {
	// text is the input the turn was started for.
	text string
	// afterBusy: the turn started once the busy turn had ended.
	afterBusy bool
}

// outcomeOf reads a scenario's outcome from a record; typed is what
// herdr-link typed into the pane (to tell its wrappers), results the
// sends.
func outcomeOf(sc Scenario, rec record, typed []string, results []sent) Outcome {
	o := Outcome{Submitted: true, Separate: true, Intact: true}
	for _, s := range results {
		var in []int
		for i, x := range rec.turns {
			if strings.Contains(x.text, s.id) {
				in = append(in, i)
			}
		}
		o.Delivery = append(o.Delivery, s.delivery)
		switch {
		case len(in) == 0:
			o.Submitted = false
			o.Lost++
			continue
		case len(in) > 1:
			o.Duplicated += len(in) - 1
		}
		turn := rec.turns[in[0]]
		for _, other := range results {
			if other.id != s.id && strings.Contains(turn.text, other.id) {
				o.Separate = false
			}
		}
		// The wrapper herdr-link typed reaches the model whole.
		wrapper := ""
		for _, p := range typed {
			if strings.Contains(p, s.id) {
				wrapper = p
			}
		}
		// (Surrounding blank lines aside: a host may trim the text.)
		if wrapper == "" || !strings.Contains(turn.text, strings.TrimSpace(wrapper)) || !extracts(turn.text, s.id) {
			o.Intact = false
		}
		if sc.Draft != "" && strings.Contains(turn.text, sc.Draft) {
			o.DraftMerged = true
		}
		if rec.busy >= 0 && in[0] > rec.busy {
			switch {
			case rec.busyCut:
				o.Interrupting = true // the running answer was dropped for it
			case turn.afterBusy:
				o.Queued = true // it waited for the answer to end
			}
		}
	}
	return o
}
