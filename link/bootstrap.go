package link

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/herdr-link/herdr-link/socket"
)

// named resolves the caller and makes sure it has an Agent Name, running
// the self bootstrap for an unnamed occupant.
func (l *Link) named(ctx context.Context) (snapshot, string, error) {
	s, err := l.resolve(ctx)
	if err != nil {
		return s, "", err
	}
	if s.self == nil {
		return s, "", newErr(SelfUnnamed, detailUndetected, nil)
	}
	if ValidName(s.self.Name) {
		return s, s.self.Name, nil
	}
	if s.self.Name != "" {
		return s, "", l.badSelfName(s.self.Name)
	}
	name, err := l.ensureName(ctx, s.self.PaneID)
	return s, name, err
}

// ensureName names the caller's unnamed occupant (pane paneID): "hl-" and
// 8 hex digits, regenerated up to 3 times on agent_name_taken, confirmed by
// a fresh agent.get. Concurrent callers share one sequence; nothing is
// remembered once it settles.
//
// The sequence runs in its own goroutine under its own context (detached
// from any one caller's cancellation, bounded by CallTimeout), so one
// caller giving up does not fail the others: each waiter gives up on its
// own ctx only. It starts by re-reading the occupant: a caller holding an
// agent.list answer older than a rename that has settled since finds the
// name there instead of renaming a second time. So an unnamed occupant is
// renamed at most once.
func (l *Link) ensureName(ctx context.Context, paneID string) (string, error) {
	l.mu.Lock()
	c := l.inflight
	if c == nil {
		c = &bootCall{done: make(chan struct{})}
		l.inflight = c
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.callTimeout())
		go func() {
			defer cancel()
			name, err := l.rename(wctx, paneID)
			l.mu.Lock()
			c.name, c.err = name, err
			l.inflight = nil
			l.mu.Unlock()
			close(c.done)
		}()
	}
	l.mu.Unlock()
	select {
	case <-c.done:
		return c.name, c.err
	case <-ctx.Done():
		return "", ctxErr(ctx)
	}
}

// ctxErr is the link error of a caller's context that ended.
func ctxErr(ctx context.Context) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return newErr(NotInHerdr, detailUnreachable, fmt.Errorf("%w: %w", socket.ErrTimeout, ctx.Err()))
	}
	return newErr(NotInHerdr, detailCancelled, ctx.Err())
}

func (l *Link) rename(ctx context.Context, paneID string) (string, error) {
	// Re-check after winning the flight: an earlier flight may have named
	// the occupant after this caller's snapshot was taken.
	cur, err := l.cfg.Herdr.GetAgent(ctx, paneID)
	if err != nil {
		return "", l.fail(opName, "agent.get", err)
	}
	if ValidName(cur.Name) {
		l.log().Debug("self already named", "name", cur.Name)
		return cur.Name, nil
	}
	if cur.Name != "" {
		return "", l.badSelfName(cur.Name)
	}
	for attempt := 1; attempt <= 3; attempt++ {
		name := newSelfName()
		if l.cfg.NameGen != nil {
			name = l.cfg.NameGen()
		}
		_, err := l.cfg.Herdr.Rename(ctx, paneID, name)
		if errors.Is(err, socket.ErrAgentNameTaken) {
			l.log().Info("self name taken, regenerating", "name", name, "attempt", attempt)
			continue
		}
		if err != nil {
			return "", l.fail(opName, "agent.rename", err)
		}
		got, err := l.cfg.Herdr.GetAgent(ctx, paneID)
		if err != nil {
			return "", l.fail(opName, "agent.get", err)
		}
		if got.Name != name {
			l.log().Warn("self name not confirmed", "want", name, "got", got.Name)
			return "", newErr(SelfUnnamed, detailUnnamed, nil)
		}
		l.log().Info("named self", "name", name, "pane_id", paneID)
		return name, nil
	}
	return "", newErr(SelfUnnamed, detailUnnamed, errors.New("agent_name_taken three times"))
}

// badSelfName is the failure of a caller Herdr shows under a name outside
// the Agent Name grammar: a named occupant, never renamed. The operator
// log quotes the name; the model-facing detail does not.
func (l *Link) badSelfName(name string) *Error {
	l.log().Warn("self name is not a valid agent name; a named agent is never renamed: rename it in Herdr", "name", fmt.Sprintf("%q", name))
	return newErr(SelfUnnamed, detailBadName, nil)
}

// Bootstrap is the start-up self naming: it names the caller's occupant if
// Herdr sees it unnamed, waiting briefly (ReadinessRetries ×
// ReadinessDelay) for Herdr to detect a freshly started occupant. A named
// occupant is left alone, even under a name outside the grammar (that is
// SELF_UNNAMED with its own detail). It returns the caller's name.
func (l *Link) Bootstrap(ctx context.Context) (string, error) {
	ctx, cancel := l.bound(ctx)
	defer cancel()
	retries, delay := l.cfg.ReadinessRetries, l.cfg.ReadinessDelay
	if retries <= 0 {
		retries = 3
	}
	if delay <= 0 {
		delay = 200 * time.Millisecond
	}
	for i := 0; ; i++ {
		_, name, err := l.named(ctx)
		var le *Error
		if err == nil || !errors.As(err, &le) || le.Detail != detailUndetected || i >= retries {
			return name, err
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return "", ctxErr(ctx)
		}
	}
}
