package link

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

// Gate is the environment check: HERDR_ENV=1, a HERDR_PANE_ID, and a
// resolvable Herdr socket path. getenv is os.Getenv when nil.
type Gate struct {
	OK     bool
	PaneID string
	Socket socket.Resolution
	// Reason says which condition failed (operator text).
	Reason string
	// Failed names the failed condition for [Gate.Advice]: one of the
	// Failed* constants, "" when OK.
	Failed string
}

// CheckGate evaluates the environment gate.
func CheckGate(getenv func(string) string) Gate {
	if getenv == nil {
		getenv = os.Getenv
	}
	var g Gate
	g.PaneID = getenv(socket.EnvPaneID)
	res, err := socket.ResolvePath(getenv)
	g.Socket = res
	switch {
	case getenv(socket.EnvHerdr) == "":
		g.Reason, g.Failed = "HERDR_ENV is not set", FailedHerdrEnv
	case getenv(socket.EnvHerdr) != "1":
		g.Reason, g.Failed = "HERDR_ENV is not 1", FailedHerdrEnvValue
	case g.PaneID == "":
		g.Reason, g.Failed = "HERDR_PANE_ID is not set", FailedPaneID
	case err != nil:
		g.Reason, g.Failed = err.Error(), FailedSocketPath
	default:
		g.OK = true
	}
	return g
}

// Link runs herdr-link/1 operations for the agent in one pane. Self and
// targets are resolved from Herdr on every call; nothing about them is
// cached. A Link is safe for concurrent use.
type Link struct {
	// Herdr is the control plane.
	Herdr Herdr
	// PaneID is the caller's HERDR_PANE_ID. It may be an alias of a pane
	// that moved since the process started.
	PaneID string
	// Logger receives operator detail (Herdr's errors, ids); nil discards.
	Logger *slog.Logger
	// Now is the clock for message ids; time.Now when nil.
	Now func() time.Time
	// ReadinessRetries and ReadinessDelay bound Bootstrap's wait for Herdr
	// to detect the occupant (3 × 200 ms when zero).
	ReadinessRetries int
	ReadinessDelay   time.Duration
	// NameGen generates self names for the bootstrap; "hl-" and 8 random
	// hex digits when nil.
	NameGen func() string
	// Delivery chooses what Send does after Herdr accepted the prompt
	// (fast when zero; herdr-link's server defaults to confirm).
	Delivery DeliveryMode
	// Locker, when set, serializes deliveries to one target across
	// processes (see the panelock package); nil delivers unserialized.
	Locker Locker
	// LockWait bounds the wait for a target's delivery lock when the
	// call's context has no deadline (10 s when zero).
	LockWait time.Duration
	// SubmitHold is how long after Herdr's answer a delivery keeps the
	// target's lock at least, unless its submission was seen sooner
	// ([SubmitHold] when zero; lower it only for a simulator whose Enter
	// comes sooner than Herdr's 300 ms).
	SubmitHold time.Duration
	// ConfirmBudget replaces [ConfirmBudget] (tests).
	ConfirmBudget func(textBytes int) time.Duration
	// CallTimeout is the one overall deadline of an operation's Herdr work
	// (every socket call of a Peers, Send, Close or Bootstrap, the
	// protocol ping and the self bootstrap included): each socket call
	// gets what is left of it. DefaultCallTimeout when zero.
	CallTimeout time.Duration

	mu       sync.Mutex
	inflight *bootCall
}

type bootCall struct {
	done chan struct{}
	name string
	err  error
}

// DefaultCallTimeout is a Link's CallTimeout when zero.
const DefaultCallTimeout = socket.DefaultTimeout

func (l *Link) callTimeout() time.Duration {
	if l.CallTimeout > 0 {
		return l.CallTimeout
	}
	return DefaultCallTimeout
}

// bound gives ctx the operation deadline (an earlier deadline of ctx
// stays).
func (l *Link) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, l.callTimeout())
}

func (l *Link) log() *slog.Logger {
	if l.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Logger
}

// Peer is an agent as a model sees it: a name and an advisory state.
type Peer struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// PeersResult is what Peers returns.
type PeersResult struct {
	Self  Peer   `json:"self"`
	Peers []Peer `json:"peers"`
}

// SendResult is what Send returns. Status is always "sent" (Herdr
// accepted the prompt); Delivery says what followed: DeliverySubmitted,
// DeliveryQueued, DeliveryInterrupting or DeliveryUnconfirmed.
type SendResult struct {
	Status   string `json:"status"`
	ID       string `json:"id"`
	To       string `json:"to"`
	Delivery string `json:"delivery"`
}

// CloseResult is what Close returns.
type CloseResult struct {
	Status string `json:"status"`
	Agent  string `json:"agent"`
}

// State maps a Herdr status to the herdr-link state vocabulary:
// idle, working, blocked, done or unknown (for anything else).
func State[S ~string](s S) string {
	if schema.AgentStatus(s).Known() {
		return string(s)
	}
	return string(schema.AgentStatusUnknown)
}

// snapshot is one resolution of the caller against Herdr's agent list.
type snapshot struct {
	agents []Agent
	self   *Agent // nil: no agent detected in the caller's pane
	ws     string // the caller's current workspace
	pane   string // the caller's current pane id (HERDR_PANE_ID unless it moved)
}

// resolve reads agent.list and finds the caller in it. When the caller's
// pane id is not a current pane id (the pane moved to another workspace
// and HERDR_PANE_ID is now an alias) or its pane hosts no detected agent,
// pane.get resolves the id to the pane's current record.
func (l *Link) resolve(ctx context.Context) (snapshot, error) {
	var s snapshot
	agents, err := l.Herdr.ListAgents(ctx)
	if err != nil {
		return s, l.fail("agent.list", err, NotInHerdr)
	}
	s.agents, s.pane = agents, l.PaneID
	for i := range agents {
		if agents[i].PaneID == l.PaneID {
			s.self, s.ws = &agents[i], agents[i].WorkspaceID
			return s, nil
		}
	}
	pane, err := l.Herdr.GetPane(ctx, l.PaneID)
	if err != nil {
		if errors.Is(err, socket.ErrPaneNotFound) {
			l.log().Warn("herdr does not know the caller's pane", "pane_id", l.PaneID)
			return s, newErr(NotInHerdr, detailNoPane, err)
		}
		return s, l.fail("pane.get", err, NotInHerdr)
	}
	s.ws, s.pane = pane.WorkspaceID, pane.PaneID
	for i := range agents {
		if agents[i].PaneID == pane.PaneID {
			s.self = &agents[i]
			break
		}
	}
	if pane.PaneID != l.PaneID {
		l.log().Debug("caller's pane moved", "pane_id", l.PaneID, "current_pane_id", pane.PaneID, "workspace_id", pane.WorkspaceID)
	}
	return s, nil
}

// fail turns an error of a Herdr call into a link error: transport and
// environment failures are NOT_IN_HERDR; refusals become fallback.
func (l *Link) fail(op string, err error, fallback Code) *Error {
	if te := transport(err); te != nil {
		l.log().Warn(transportLog(err), "op", op, "err", err)
		return te
	}
	var le *Error
	if errors.As(err, &le) {
		return le
	}
	l.log().Warn("herdr refused", "op", op, "err", err)
	switch fallback {
	case SendFailed:
		return newErr(SendFailed, detailRefused, err)
	case CloseFailed:
		return newErr(CloseFailed, detailClose, err)
	case SelfUnnamed:
		return newErr(SelfUnnamed, detailUnnamed, err)
	}
	return newErr(NotInHerdr, detailRefusedCall, err)
}

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
	name, err := l.ensureName(ctx, s.self.PaneID)
	return s, name, err
}

// Peers lists the live, validly named agents of the caller's workspace,
// the caller excluded, in Herdr's layout order.
func (l *Link) Peers(ctx context.Context) (PeersResult, error) {
	ctx, cancel := l.bound(ctx)
	defer cancel()
	s, name, err := l.named(ctx)
	if err != nil {
		return PeersResult{}, err
	}
	out := PeersResult{Self: Peer{Name: name, State: State(s.self.Status)}, Peers: []Peer{}}
	for _, a := range s.peers() {
		out.Peers = append(out.Peers, Peer{Name: a.Name, State: State(a.Status)})
	}
	return out, nil
}

// peers are the agents Peers lists: validly named, in the caller's
// workspace, not the caller, in Herdr's order.
func (s snapshot) peers() []Agent {
	var out []Agent
	for _, a := range s.agents {
		if !s.inWorkspace(a) || a.PaneID == s.pane || !ValidName(a.Name) {
			continue
		}
		out = append(out, a)
	}
	return out
}

// inWorkspace reports whether a is in the caller's workspace. A workspace
// Herdr did not report, on either side, is in no one's: it fails closed.
func (s snapshot) inWorkspace(a Agent) bool {
	return s.ws != "" && a.WorkspaceID == s.ws
}

// peer finds a validly named agent of workspace ws by name (not the agent
// of pane exclude when set).
func (s snapshot) peer(name string, exclude string) (Agent, bool) {
	for _, a := range s.agents {
		if a.Name == name && s.inWorkspace(a) && (exclude == "" || a.PaneID != exclude) {
			return a, true
		}
	}
	return Agent{}, false
}

// SendRequest is what a model asks Send to do.
type SendRequest struct {
	To      string
	Message string
	ReplyTo string
}

// Send delivers a herdr-link/1 envelope to the agent named req.To in the
// caller's workspace, wrapped in self-describing text. Deliveries to one
// target are serialized by Locker; in confirm mode Send then watches the
// target for a sign of the submission (see [DeliveryMode]).
func (l *Link) Send(ctx context.Context, req SendRequest) (SendResult, error) {
	// Every input is checked before any round trip, the message and
	// reply_to before the name, so their errors do not depend on the target.
	switch err := CheckMessage(req.Message); {
	case errors.Is(err, ErrMessageTooBig):
		return SendResult{}, newErr(InvalidArgument, detailTooBig, nil)
	case err != nil:
		return SendResult{}, newErr(InvalidArgument, detailBlank, nil)
	}
	if req.ReplyTo != "" && !ValidMessageID(req.ReplyTo) {
		return SendResult{}, newErr(InvalidArgument, detailReplyTo, nil)
	}
	if CheckDeliverable(req.Message, req.ReplyTo) != nil {
		return SendResult{}, newErr(InvalidArgument, detailTooBig, nil)
	}
	if !ValidName(req.To) {
		return SendResult{}, newErr(PeerNotFound, detailPeer, nil)
	}
	// hctx bounds the Herdr work of the send (resolution, bootstrap, the
	// prompt) with the one operation deadline.
	hctx, cancel := l.bound(ctx)
	defer cancel()
	s, self, err := l.named(hctx)
	if err != nil {
		return SendResult{}, err
	}
	target, ok := s.peer(req.To, s.self.PaneID)
	if !ok {
		return SendResult{}, newErr(PeerNotFound, detailPeer, nil)
	}
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	env := Envelope{Protocol: Protocol, ID: NewMessageID(now()), From: self, To: req.To, ReplyTo: req.ReplyTo, Message: req.Message}
	text, err := Wrap(env)
	if err != nil {
		return SendResult{}, newErr(InvalidArgument, detailBlank, err)
	}
	// Waiting for the target's delivery lock is Herdr-side work of the
	// send too: bounded by the operation deadline.
	unlock, err := l.lockDelivery(hctx, target)
	if err != nil {
		l.log().Info("delivery lock not acquired", "to", req.To, "pane_id", target.PaneID, "err", err)
		return SendResult{}, err
	}
	// The pane id from this snapshot is workspace-scoped: if the target
	// moved to another workspace since, Herdr no longer accepts it as an
	// agent target and nothing crosses the boundary.
	got, err := l.Herdr.Prompt(hctx, target.PaneID, text)
	accepted := time.Now()
	if err != nil {
		if errors.Is(err, socket.ErrAfterWrite) {
			// The text may be in the pane: keep the lock past the Enter.
			releaseAfter(accepted, l.submitHold(), unlock)
		} else {
			unlock()
		}
		return SendResult{}, l.sendError(err)
	}
	// Herdr accepted the prompt: the operation deadline is spent here. Any
	// work after acceptance (a delivery-confirmation watch) runs on ctx
	// with a budget of its own, not on hctx.
	if got.PaneID != target.PaneID || got.Name != target.Name {
		releaseAfter(accepted, l.submitHold(), unlock)
		l.log().Warn("prompt reached a different occupant", "pane_id", target.PaneID, "want_name", target.Name, "got_name", got.Name)
		return SendResult{}, newErr(SendFailed, detailChanged, nil)
	}
	delivery := DeliveryUnconfirmed
	if l.Delivery == DeliveryConfirm {
		delivery = l.confirm(ctx, target, got, len(text))
	}
	switch {
	case delivery == DeliverySubmitted:
		unlock() // a turn started: Herdr's Enter is past
	case delivery == DeliveryQueued:
		l.holdQueued(ctx, target, got, len(text), accepted, l.submitHold(), unlock)
	default:
		releaseAfter(accepted, l.submitHold(), unlock)
	}
	l.log().Debug("sent", "id", env.ID, "from", self, "to", req.To, "pane_id", target.PaneID, "bytes", len(text),
		"kind", got.Kind, "status_before", got.Status, "delivery", delivery, "took", time.Since(accepted))
	return SendResult{Status: "sent", ID: env.ID, To: req.To, Delivery: delivery}, nil
}

func (l *Link) sendError(err error) error {
	if errors.Is(err, socket.ErrAfterWrite) {
		// Written in full, then the answer was lost: the text may be in
		// the pane. Never NOT_IN_HERDR, which invites a resend.
		l.log().Warn("agent.prompt outcome unknown: the request was written, the answer lost", "err", err)
		return newErr(SendFailed, detailMaybeSent, err)
	}
	if te := transport(err); te != nil {
		l.log().Warn(transportLog(err), "op", "agent.prompt", "err", err)
		return te
	}
	l.log().Warn("herdr refused the prompt", "err", err)
	switch {
	case errors.Is(err, socket.ErrAgentNotFound):
		// The target vanished or left the workspace after resolution.
		return newErr(PeerNotFound, detailPeer, err)
	case errors.Is(err, socket.ErrAgentBlocked):
		return newErr(SendFailed, detailBlocked, err)
	case errors.Is(err, socket.ErrAgentNotReady):
		return newErr(SendFailed, detailNotReady, err)
	}
	return newErr(SendFailed, detailRefused, err)
}

// Close closes the pane of the agent named agent in the caller's
// workspace. The caller needs no name of its own. Closing the caller's own
// pane is allowed; the process may end before the answer arrives.
func (l *Link) Close(ctx context.Context, agent string) (CloseResult, error) {
	if !ValidName(agent) {
		return CloseResult{}, newErr(PeerNotFound, detailPeer, nil)
	}
	ctx, cancel := l.bound(ctx)
	defer cancel()
	s, err := l.resolve(ctx)
	if err != nil {
		return CloseResult{}, err
	}
	target, ok := s.peer(agent, "")
	if !ok {
		return CloseResult{}, newErr(PeerNotFound, detailPeer, nil)
	}
	if err := l.Herdr.ClosePane(ctx, target.PaneID); err != nil {
		if errors.Is(err, socket.ErrAfterWrite) {
			l.log().Warn("pane.close outcome unknown: the request was written, the answer lost", "pane_id", target.PaneID, "err", err)
			return CloseResult{}, newErr(CloseFailed, detailMaybeClosed, err)
		}
		if te := transport(err); te != nil {
			l.log().Warn(transportLog(err), "op", "pane.close", "err", err)
			return CloseResult{}, te
		}
		l.log().Warn("herdr refused to close", "pane_id", target.PaneID, "err", err)
		if errors.Is(err, socket.ErrPaneNotFound) {
			return CloseResult{}, newErr(PeerNotFound, detailPeer, err)
		}
		return CloseResult{}, newErr(CloseFailed, detailClose, err)
	}
	l.log().Info("closed", "agent", agent, "pane_id", target.PaneID)
	return CloseResult{Status: "closed", Agent: agent}, nil
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
	cur, err := l.Herdr.GetAgent(ctx, paneID)
	if err != nil {
		return "", l.fail("agent.get", err, SelfUnnamed)
	}
	if ValidName(cur.Name) {
		l.log().Debug("self already named", "name", cur.Name)
		return cur.Name, nil
	}
	for attempt := 1; attempt <= 3; attempt++ {
		name := newSelfName()
		if l.NameGen != nil {
			name = l.NameGen()
		}
		_, err := l.Herdr.Rename(ctx, paneID, name)
		if errors.Is(err, socket.ErrAgentNameTaken) {
			l.log().Info("self name taken, regenerating", "name", name, "attempt", attempt)
			continue
		}
		if err != nil {
			return "", l.fail("agent.rename", err, SelfUnnamed)
		}
		got, err := l.Herdr.GetAgent(ctx, paneID)
		if err != nil {
			return "", l.fail("agent.get", err, SelfUnnamed)
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

// Bootstrap is the start-up self naming: it names the caller's occupant if
// Herdr sees it unnamed, waiting briefly (ReadinessRetries ×
// ReadinessDelay) for Herdr to detect a freshly started occupant. A named
// occupant is left alone. It returns the caller's name.
func (l *Link) Bootstrap(ctx context.Context) (string, error) {
	ctx, cancel := l.bound(ctx)
	defer cancel()
	retries, delay := l.ReadinessRetries, l.ReadinessDelay
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
