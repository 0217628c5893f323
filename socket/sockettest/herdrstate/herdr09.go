package herdrstate

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/schema"
)

// Release is what one Herdr release does where releases differ on the
// socket. The handlers consult it through a few small hooks; a nil
// release (a world never given one, [World.SetRelease]) is the
// simulator's long-standing 0.8.2 model.
//
// Sources, per field: the 0.9.x behaviour comes from the 0.9.1-based
// source tree zubo334/herdr at 5e1016e4 (a fork that tracks upstream, the
// same tree the protocol-22 schema was taken from) and from upstream's
// CHANGELOG.md at herdrdev/herdr 16996f3b, section 0.9.0.
type Release struct {
	// Version and Protocol are what ping reports.
	Version  string
	Protocol uint32
	// Capabilities is ping's capabilities object.
	Capabilities string
	// PromptAfterEnter: agent.prompt answers only once the text and the
	// delayed Enter were written to the pane (0.9: src/app/api/agents.rs
	// handle_deferred_agent_api_request, which replies from the
	// submission's completion; CHANGELOG 0.9.0 "agent prompt now reliably
	// sends the prompt and Enter before reporting successful submission").
	// 0.8.2 answers before the Enter (src/app/api/agents.rs:121-126 at
	// 1c76079f).
	PromptAfterEnter bool
	// SubmissionFailsOnExit: a submission still pending when the pane's
	// terminal goes away answers agent_prompt_failed "pty actor closed"
	// (0.9: src/terminal/pty_io actor, pty_actor_closed; CHANGELOG 0.9.0
	// "Pending submissions fail cleanly if the terminal exits").
	SubmissionFailsOnExit bool
	// ExpiredSubmissionRefused: a queued submission whose deadline (a
	// prompt wait's timeout_ms) leaves no room for the Enter delay is
	// refused with timeout "agent prompt timed out before input
	// submission" before any byte is typed (0.9: pty_io actor,
	// input_submission_timed_out; CHANGELOG 0.9.0 "Expired queued
	// submissions are rejected before typing starts", #3187). The source
	// applies the deadline on Windows only; the simulator applies it
	// everywhere, which is the stricter model for clients.
	ExpiredSubmissionRefused bool
	// RecentIncludesViewport: pane.read with source "recent" includes the
	// lines still on the viewport. 0.8.2 returned only lines that had
	// scrolled off (empty text for a short pane). Only the CHANGELOG
	// speaks here (0.9.0 "Recent pane reads now include output that has
	// not yet scrolled off the viewport, instead of returning empty
	// text", #3444).
	RecentIncludesViewport bool
	// SubscribeReplays: a new plain-event subscription replays the
	// retained history (0.8.2: src/api/subscriptions.rs:115-118 at
	// 1c76079f). 0.9.0 starts with live events (CHANGELOG 0.9.0 "New
	// lifecycle event subscriptions now start with live events rather
	// than replaying retained history", #1270).
	SubscribeReplays bool
	// LinkResolve: pane.link.resolve exists (protocol-22 schema; 0.9.1).
	LinkResolve bool
	// Later 0.9 patches (0.9.2–0.9.5): see herdr095.go for their sources.
	Patch095
}

// Capabilities of ping per protocol (the server's PongFor).
const (
	Caps082 = `{"live_handoff":true,"detached_server_daemon":true}`
	Caps09  = `{"live_handoff":true,"detached_server_daemon":true,"endpoint_protocol_generation":1,"health_check":true,"surface_interest":true}`
)

// NewestHerdr is the newest Herdr release the simulator has a source for.
const NewestHerdr = "0.9.1"

// ViewportRows is the simulated viewport height (Herdr 0.8.2 headless
// servers: 120×40).
const ViewportRows = 40

// HerdrRelease returns the behaviour of Herdr version v: "0.8.2", or any
// 0.9.x (0.9.0 lacks pane.link.resolve). A later 0.9 patch (0.9.5) or a
// newer release behaves as the newest known one and reports v.
func HerdrRelease(v string) (Release, error) {
	major, minor, patch, ok := parseVersion(v)
	switch {
	case !ok:
		return Release{}, fmt.Errorf("sockettest: Herdr version %q: want MAJOR.MINOR.PATCH (0.8.2, 0.9.1)", v)
	case major == 0 && minor == 8 && patch == 2:
		return Release{Version: v, Protocol: 20, Capabilities: Caps082, SubscribeReplays: true}, nil
	case major == 0 && minor < 9:
		return Release{}, fmt.Errorf("sockettest: Herdr %s is not simulated (0.8.2 and 0.9.x are)", v)
	}
	r := Release{Version: v, Protocol: 22, Capabilities: Caps09, PromptAfterEnter: true, SubmissionFailsOnExit: true,
		ExpiredSubmissionRefused: true, RecentIncludesViewport: true, LinkResolve: minor > 9 || major > 0 || patch >= 1}
	r.Patch095 = patch095(major, minor, patch)
	return r, nil
}

func parseVersion(v string) (major, minor, patch int, ok bool) {
	core, _, _ := strings.Cut(v, "-") // preview builds: 0.9.1-preview.3
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return 0, 0, 0, false
	}
	var n [3]int
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 {
			return 0, 0, 0, false
		}
		n[i] = x
	}
	return n[0], n[1], n[2], true
}

// EnvHerdrVersion names the environment variable that makes every
// simulator server of a test process (and herdr-sim serve's default)
// speak that Herdr version, so a CI job can run whole suites against a
// second world without a copy of any test.
const EnvHerdrVersion = "HERDR_SIM_VERSION"

// DefaultHerdrVersion is $HERDR_SIM_VERSION, or "0.8.2".
func DefaultHerdrVersion() string {
	if v := os.Getenv(EnvHerdrVersion); v != "" {
		return v
	}
	return "0.8.2"
}

// SetRelease makes the world behave as Herdr release r ([HerdrRelease]).
func (w *World) SetRelease(r Release) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.release = &r
}

// Release returns the world's release ([World.SetRelease]), or 0.8.2's
// when none was given.
func (w *World) Release() Release {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rel()
}

// rel is the world's release (w.mu held).
func (w *World) rel() Release {
	if w.release == nil {
		return Release{Version: "0.8.2", Protocol: 20, Capabilities: Caps082, SubscribeReplays: true}
	}
	return *w.release
}

// submission is one agent.prompt's text and Enter on their way into a
// pane; done is closed once both were written or the submission failed.
type submission struct {
	done     chan struct{}
	err      *herdrError
	deadline time.Time // zero: none
	start    func()    // types the text and schedules the Enter
}

func (sub *submission) finish(e *herdrError) {
	select {
	case <-sub.done:
	default:
		sub.err = e
		close(sub.done)
	}
}

// submit types text into pn's terminal t and Enter delay later (w.mu
// held). Under a release that answers after Enter, the returned
// submission tells when that happened; a stalled terminal (one whose
// program is not reading) queues it until [World.StallInput] lets go.
func (w *World) submit(pn *pane, t *terminal, p schema.AgentPromptParams, text string, delay time.Duration) *submission {
	sub := &submission{done: make(chan struct{})}
	if p.Wait != nil && p.Wait.TimeoutMS != nil {
		sub.deadline = time.Now().Add(time.Duration(*p.Wait.TimeoutMS) * time.Millisecond)
	}
	sub.start = func() {
		typed, submits := w.beforeTyping(t, p.Text)
		if !typed {
			// An open picker took the text, or it never reached the pane:
			// Herdr answers as if it was submitted.
			w.clock.AfterFunc(delay, func() { sub.finish(nil) })
			return
		}
		t.prompts = append(t.prompts, p.Text)
		w.write(t, text)
		w.flapAfterPrompt(pn)
		w.clock.AfterFunc(delay, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if pn.term != t || w.paneByTarget(pn.id) != pn {
				// The terminal went away before the Enter: 0.9's actor
				// refuses the rest of the submission.
				sub.finish(herr("agent_prompt_failed", "pty actor closed"))
				return
			}
			enter := "\r"
			if t.recv != nil {
				enter = t.recv.EnterKey()
			}
			if submits {
				w.write(t, enter)
			}
			sub.finish(nil)
		})
	}
	if w.rel().PromptAfterEnter && w.stalled[t] {
		w.queued[t] = append(w.queued[t], sub)
		return sub
	}
	sub.start()
	return sub
}

// StallInput makes the program of paneID stop (true) or resume (false)
// reading its input, as a busy agent that does not read stdin does. Under
// a 0.9 release prompts to a stalled pane wait in Herdr's queue: their
// answer waits too, an expired one is refused before typing when the
// program resumes, and closing the pane fails them. 0.8.2 hands text to
// the pane's input channel at once and is not affected.
func (w *World) StallInput(paneID string, stalled bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, err := w.lockedPane(paneID)
	if err != nil {
		return err
	}
	t := p.term
	if w.stalled == nil {
		w.stalled, w.queued = map[*terminal]bool{}, map[*terminal][]*submission{}
	}
	if stalled {
		w.stalled[t] = true
		return nil
	}
	delete(w.stalled, t)
	w.drainQueued(t)
	return nil
}

// drainQueued starts or refuses t's queued submissions (w.mu held).
func (w *World) drainQueued(t *terminal) {
	subs := w.queued[t]
	delete(w.queued, t)
	for _, sub := range subs {
		if !sub.deadline.IsZero() && time.Until(sub.deadline) <= PromptSubmitDelay {
			sub.finish(herr("timeout", "agent prompt timed out before input submission"))
			continue
		}
		sub.start()
	}
}

// failQueued fails the submissions queued for t: its pane closed (w.mu
// held).
func (w *World) failQueued(t *terminal) {
	for _, sub := range w.queued[t] {
		sub.finish(herr("agent_prompt_failed", "pty actor closed"))
	}
	delete(w.queued, t)
	delete(w.stalled, t)
}

// awaitSubmission waits, under a release that answers after Enter, until
// sub finished (or the server closes), and returns its error.
func (c *call) awaitSubmission(sub *submission) *herdrError {
	c.w.mu.Lock()
	after := c.w.rel().PromptAfterEnter
	c.w.mu.Unlock()
	if sub == nil || !after {
		return nil
	}
	select {
	case <-sub.done:
		return sub.err
	case <-c.s.Done:
		return herr("server_unavailable", "server is shutting down")
	case <-c.ctx.Done():
		return nil // a waiting client left; respond writes nothing
	}
}

// Queued is how many prompts wait in Herdr's input queue of paneID (a
// stalled pane under a 0.9 release, [World.StallInput]).
func (w *World) Queued(paneID string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.paneByTarget(paneID)
	if p == nil {
		return 0
	}
	return len(w.queued[p.term])
}
