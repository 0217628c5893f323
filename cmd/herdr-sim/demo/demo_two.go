package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// twoAtOnce: brain messages the reviewer, and tester right after it.
// Typed into the reviewer's running turn, tester's message would
// interrupt it (Codex steers), or be glued to brain's into one turn: it
// is held while the reviewer works and typed as a turn of its own once
// that turn has ended.
func twoAtOnce(ctx context.Context, out io.Writer, w *sockettest.World, revPane string, a, b *demoSession) error {
	if !b.ready {
		if _, err := b.c.Initialize(ctx, "2025-06-18"); err != nil {
			return err
		}
		if _, _, err := b.tool(ctx, "herdr_link", nil, false); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "  brain messages the reviewer, and tester right after it, while the reviewer works on brain's message (two herdr-link processes):")
	before := len(w.Submissions(revPane))
	type res struct {
		s    *demoSession
		text string
		sent link.SendResult
		d    time.Duration
		err  error
	}
	results := make([]res, 2)
	for i, s := range []*demoSession{a, b} {
		start := time.Now()
		r, t, err := s.tool(ctx, "herdr_link_send", map[string]any{"to": "reviewer", "message": fmt.Sprintf("%s here: the checkout tests pass on my side.", s.name)}, false)
		results[i] = res{s: s, text: t, d: time.Since(start), err: err}
		if err == nil {
			results[i].err = jsonx.Unmarshal(r.StructuredContent, &results[i].sent)
		}
	}
	ids := map[string]string{}
	for _, r := range results {
		if r.err != nil {
			return r.err
		}
		fmt.Fprintf(out, "  %-9s %-44s %8.2f ms  %s\n", "["+r.s.name+"]", `herdr_link_send to "reviewer"`, float64(r.d.Microseconds())/1000, r.text)
		ids[r.sent.ID] = r.s.name
	}
	interrupts := w.Interrupts(revPane)
	firstEnded, err := watchTurns(ctx, w, revPane, before)
	if err != nil {
		return err
	}
	turns := w.Submissions(revPane)[before:]
	fmt.Fprintf(out, "  The reviewer's model received %d separate turns:\n", len(turns))
	for i, t := range turns {
		envs := link.ExtractAll(t.Text)
		var who []string
		for _, e := range envs {
			who = append(who, fmt.Sprintf("%s from %s", e.ID, ids[e.ID]))
		}
		fmt.Fprintf(out, "  │ turn %d: %d envelope(s): %s\n", i+1, len(envs), strings.Join(who, ", "))
	}
	if len(turns) != 2 {
		return fmt.Errorf("the reviewer received %d turns, want 2", len(turns))
	}
	if n := w.Interrupts(revPane) - interrupts; n != 0 {
		return fmt.Errorf("%d of the reviewer's turns were interrupted", n)
	}
	if firstEnded.IsZero() || turns[1].At.Before(firstEnded) {
		return errors.New("the second message was typed while the reviewer's first turn ran")
	}
	fmt.Fprintf(out, "  (the held one was typed %.0f ms after the first turn began, once the reviewer had finished it: nothing interrupted)\n\n",
		float64(turns[1].At.Sub(turns[0].At).Microseconds())/1000)
	return nil
}

// watchTurns waits until pane has two turns after its first before, and
// returns when the first of them ended (its agent no longer working).
func watchTurns(ctx context.Context, w *sockettest.World, pane string, before int) (time.Time, error) {
	deadline := time.Now().Add(10 * time.Second)
	var ended time.Time
	for len(w.Submissions(pane)) < before+2 && time.Now().Before(deadline) {
		if a, ok := w.Agent(pane); ok && ended.IsZero() && len(w.Submissions(pane)) == before+1 && a.AgentStatus != schema.AgentStatusWorking {
			ended = time.Now().UTC()
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	return ended, nil
}
