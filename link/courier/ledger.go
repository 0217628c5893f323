package courier

import (
	"errors"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link/deliver"
	"github.com/herdr-link/herdr-link/link/proto"
)

// Defaults of request tracking.
const (
	// DefaultReplyGrace is how long a recipient whose turn with a request
	// ended has to answer it before the request counts as handled.
	DefaultReplyGrace = 3 * time.Second
	// DefaultRequestTTL is how long a request is tracked at most.
	DefaultRequestTTL = time.Hour
)

// The states of a request, as herdr_link_wait reports them: pending, or
// one of the outcomes.
const (
	RequestPending = "pending"
)

func (c *Courier) replyGrace() time.Duration {
	if c.cfg.ReplyGrace > 0 {
		return c.cfg.ReplyGrace
	}
	return DefaultReplyGrace
}

func (c *Courier) requestTTL() time.Duration {
	if c.cfg.RequestTTL > 0 {
		return c.cfg.RequestTTL
	}
	return DefaultRequestTTL
}

// Sent is what the courier keeps of a message the send path accepted:
// its id, its sender's and recipient's names, and the message it answers.
type Sent struct {
	ID, From, To, ReplyTo string
}

// RecordRequest records m, sent by self to target, as a pending request
// before it is typed or held (the caller asks only for a message that
// expects a reply); nil when there is no store. An error means nothing
// was sent.
func (c *Courier) RecordRequest(self, target deliver.Agent, env Sent) (*outbox.Request, error) {
	if c.cfg.Outbox == nil {
		return nil, nil
	}
	now := c.now()
	r := outbox.Request{
		ID: env.ID, Expires: now.Add(c.requestTTL()), To: env.To, From: env.From,
		TargetKey: deliver.LockKey(target), FromKey: deliver.LockKey(self),
		PaneID: target.PaneID, TerminalID: target.TerminalID, Kind: target.Kind, WorkspaceID: target.WorkspaceID,
		FromPane: self.PaneID, FromKind: self.Kind, FromWorkspace: self.WorkspaceID,
	}
	r, err := c.cfg.Outbox.AddRequest(r, now)
	if err != nil {
		return nil, c.cfg.Ports.OutboxFailed(err)
	}
	// The courier is not woken: it finds the request at its next scan
	// (a scan lists the whole store), and a turn that came and went
	// before shows in the recipient's state_change_seq.
	return &r, nil
}

// AfterTyping settles the request record of a direct delivery: typed
// (recorded as soon as it was, by TypeLocked), removed when nothing
// reached the pane, or ended not_submitted when its text stayed in the
// recipient's composer (the send's answer says so: no notice).
func (c *Courier) AfterTyping(rec *outbox.Request, delivery string, err error) {
	switch {
	case rec == nil:
	case err != nil && !c.cfg.Ports.TypedMaybe(err):
		_ = c.cfg.Outbox.ForgetRequest(*rec)
	case err == nil && delivery == deliver.DeliveryNotSubmitted:
		c.endNotSubmitted(rec.Entry(), false)
	}
}

// endNotSubmitted ends request e not_submitted, with its notice when
// notice is set. The ledger's flock is waited for by EndRequest (about a
// second: past that its holder is stopped, and trying again only makes
// the send's caller wait longer).
func (c *Courier) endNotSubmitted(e outbox.Entry, notice bool) {
	before := func(r outbox.Request) error {
		if !notice || c.cfg.NoNotices {
			return nil
		}
		return c.holdNotice(r.ID, r.To, outbox.OutcomeNotSubmitted, r.From, r.FromKey, r.FromPane, r.FromKind, r.FromWorkspace)
	}
	r, ended, err := c.cfg.Outbox.EndRequest(e, outbox.OutcomeNotSubmitted, c.now(), before)
	switch {
	case err != nil:
		c.log().Warn("request: outcome not recorded", "id", e.ID, "err", err)
	case ended:
		c.log().Info("request ended", "id", r.ID, "to", r.To, "outcome", outbox.OutcomeNotSubmitted)
	}
}

// requestTyped records that message id, if it is a request, was typed at
// at with the recipient at state_change_seq seq.
func (c *Courier) requestTyped(id string, at time.Time, seq uint64) {
	if c.cfg.Outbox == nil {
		return
	}
	e, err := c.cfg.Outbox.FindRequest(id)
	if err != nil {
		return
	}
	if err := c.cfg.Outbox.MarkTyped(e, at, seq); err != nil {
		c.log().Warn("request: typing not recorded", "id", id, "err", err)
	}
}

// Answered ends the request env answers (a held answer counts: it was
// accepted).
func (c *Courier) Answered(env Sent) {
	if env.ReplyTo != "" {
		c.markRepliedID(env.ReplyTo, env.From, env.To)
	}
}

// markRepliedID ends request id as replied when it is a pending request
// from the agent named to, to the agent named from (the answer's sender).
func (c *Courier) markRepliedID(id, from, to string) {
	if c.cfg.Outbox == nil {
		return
	}
	e, err := c.cfg.Outbox.FindRequest(id)
	if err != nil {
		return // not a request this machine tracks: a reference sender's, say
	}
	r, err := c.cfg.Outbox.Request(e)
	if err != nil || r.State != outbox.StatePending || r.From != to || r.To != from {
		return
	}
	if _, ended, err := c.cfg.Outbox.EndRequest(e, outbox.OutcomeReplied, c.now(), nil); err != nil {
		c.log().Warn("request: reply not recorded", "id", id, "err", err)
	} else if ended {
		c.log().Debug("request replied", "id", id, "from", to, "to", from)
	}
}

// Notice is what herdr-link types into a request's sender when the
// request ended without a reply (or a held answer was never typed).
type Notice struct {
	Protocol string `json:"protocol"`
	// Notice is what happened: handled, blocked, gone, expired, cancelled,
	// not_submitted.
	Notice string `json:"notice"`
	// About is the id of the message it is about; Peer its recipient.
	About string `json:"about"`
	Peer  string `json:"peer"`
}

// noticeID is the id of the notice about message id: one per message,
// whoever writes it.
func noticeID(id string) string { return "n_" + strings.TrimPrefix(id, "hl_") }

// Text is the typed text of notice n: a line for the model, the notice
// as one JSON line, each on lines of their own.
func (n Notice) Text() string {
	b, _ := jsonx.Marshal(n)
	var what string
	switch n.Notice {
	case outbox.OutcomeHandled:
		what = "finished the turn that took it without replying"
	case outbox.OutcomeBlocked:
		what = "stopped at an interactive prompt of its user while on it"
	case outbox.OutcomeGone:
		what = "is gone (its pane closed, or another agent took it)"
	case outbox.OutcomeExpired:
		what = "did not get it in time: it expired"
	case outbox.OutcomeNotSubmitted:
		what = "did not get it: it was typed into its input box but not submitted, and is still there unsent"
	default:
		what = "did not get it: " + n.Notice
	}
	next := "Send again or ask it if you still need an answer."
	if n.Notice == outbox.OutcomeNotSubmitted {
		next = "Do not send it again (it would join the unsent text): tell your user, who can submit or clear it in that agent's pane."
	}
	return "\n[herdr-link/1] Notice from Herdr Link (not typed by your user, not a message from an agent): agent \"" + n.Peer +
		"\", to which you sent message " + n.About + ", " + what + ". " + next + "\n" + string(b) + "\n"
}

// endRequest gives request e its outcome, and for any outcome but replied
// holds a notice for its sender (unless notices are off). It reports
// whether this call ended it.
func (c *Courier) endRequest(e outbox.Entry, outcome string) bool {
	notice := func(r outbox.Request) error {
		if outcome == outbox.OutcomeReplied || c.cfg.NoNotices {
			return nil
		}
		return c.holdNotice(r.ID, r.To, outcome, r.From, r.FromKey, r.FromPane, r.FromKind, r.FromWorkspace)
	}
	r, ended, err := c.cfg.Outbox.EndRequest(e, outcome, c.now(), notice)
	switch {
	case errors.Is(err, outbox.ErrBusy), errors.Is(err, outbox.ErrNotFound):
		return false
	case err != nil:
		c.log().Warn("request: outcome not recorded", "id", e.ID, "err", err)
		return false
	case ended:
		c.log().Debug("request ended", "id", r.ID, "to", r.To, "outcome", outcome)
	}
	return ended
}

// holdNotice holds the notice about message id (to peer) for its sender,
// once: a notice already written for it (in any state) is not written
// again.
func (c *Courier) holdNotice(id, peer, what, to, toKey, toPane, toKind, toWorkspace string) error {
	nid := noticeID(id)
	if _, err := c.cfg.Outbox.Find(nid); err == nil {
		return nil
	}
	now := c.now()
	term := toKey
	if strings.HasPrefix(term, "pane:") {
		term = ""
	}
	m := outbox.Message{
		ID: nid, Expires: now.Add(c.holdFor()), To: to, From: peer, TargetKey: toKey, FromKey: toKey,
		PaneID: toPane, TerminalID: term, Kind: toKind, WorkspaceID: toWorkspace, FromPane: toPane,
		Text: Notice{Protocol: proto.Protocol, Notice: what, About: id, Peer: peer}.Text(), Notice: true,
	}
	if _, err := c.cfg.Outbox.Add(m, now); err != nil {
		return err
	}
	c.kickFor(c.cfg.Outbox.KeyHash(toKey))
	return nil
}

// tellNotSubmitted tells the sender of held message m that it was typed
// but not submitted: a request ends not_submitted (its notice written
// with the outcome), any other message gets a notice. A notice itself
// ends silently.
func (c *Courier) tellNotSubmitted(m outbox.Message) {
	if m.Notice {
		return
	}
	if e, err := c.cfg.Outbox.FindRequest(m.ID); err == nil {
		c.endNotSubmitted(e, true)
		return
	}
	if c.cfg.NoNotices {
		return
	}
	if err := c.holdNotice(m.ID, m.To, outbox.OutcomeNotSubmitted, m.From, m.FromKey, m.FromPane, m.FromKind, m.FromWorkspace); err != nil {
		c.log().Warn("notice not written", "id", m.ID, "err", err)
	}
}
