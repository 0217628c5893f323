package link

import (
	"errors"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/outbox"
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

func (l *Link) replyGrace() time.Duration {
	if l.cfg.ReplyGrace > 0 {
		return l.cfg.ReplyGrace
	}
	return DefaultReplyGrace
}

func (l *Link) requestTTL() time.Duration {
	if l.cfg.RequestTTL > 0 {
		return l.cfg.RequestTTL
	}
	return DefaultRequestTTL
}

// expects reports whether req expects a reply: a message without reply_to
// does, an answer does not, unless ExpectReply says otherwise.
func expects(req SendRequest) bool {
	if req.ExpectReply != nil {
		return *req.ExpectReply
	}
	return req.ReplyTo == ""
}

// recordRequest records env as a pending request before it is typed or
// held, when it expects a reply; nil when it does not (or there is no
// store). An error means nothing was sent.
func (l *Link) recordRequest(s snapshot, target Agent, env Envelope, req SendRequest) (*outbox.Request, error) {
	if l.cfg.Outbox == nil || !expects(req) {
		return nil, nil
	}
	now := l.now()
	r := outbox.Request{
		ID: env.ID, Expires: now.Add(l.requestTTL()), To: env.To, From: env.From,
		TargetKey: lockKey(target), FromKey: lockKey(*s.self),
		PaneID: target.PaneID, TerminalID: target.TerminalID, Kind: target.Kind, WorkspaceID: target.WorkspaceID,
		FromPane: s.self.PaneID, FromKind: s.self.Kind, FromWorkspace: s.self.WorkspaceID,
	}
	r, err := l.cfg.Outbox.AddRequest(r, now)
	if err != nil {
		return nil, l.outboxError(err)
	}
	// The courier is not woken: it finds the request at its next scan
	// (a scan lists the whole store), and a turn that came and went
	// before shows in the recipient's state_change_seq.
	return &r, nil
}

// recordRequestAsync is recordRequest in the background: the returned
// function waits for it and returns its result.
func (l *Link) recordRequestAsync(s snapshot, target Agent, env Envelope, req SendRequest) func() (*outbox.Request, error) {
	if l.cfg.Outbox == nil || !expects(req) {
		return func() (*outbox.Request, error) { return nil, nil }
	}
	var (
		rec  *outbox.Request
		err  error
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		rec, err = l.recordRequest(s, target, env, req)
	}()
	return func() (*outbox.Request, error) {
		<-done
		return rec, err
	}
}

// afterTyping settles the request record of a direct delivery: typed
// (recorded as soon as it was, by typeLocked), removed when nothing
// reached the pane, or ended not_submitted when its text stayed in the
// recipient's composer (the send's answer says so: no notice).
func (l *Link) afterTyping(rec *outbox.Request, delivery string, err error) {
	switch {
	case rec == nil:
	case err != nil && !typedMaybe(err):
		_ = l.cfg.Outbox.ForgetRequest(*rec)
	case err == nil && delivery == DeliveryNotSubmitted:
		l.endNotSubmitted(rec.Entry(), false)
	}
}

// endNotSubmitted ends request e not_submitted, with its notice when
// notice is set. A reader's shared flock (a courier looking at the
// record) makes an attempt fail busy for a moment: it is tried again, up
// to about 200 ms, since no other process would end it so (one that ends
// it otherwise meanwhile decides).
func (l *Link) endNotSubmitted(e outbox.Entry, notice bool) {
	before := func(r outbox.Request) error {
		if !notice || l.cfg.NoNotices {
			return nil
		}
		return l.holdNotice(r.ID, r.To, outbox.OutcomeNotSubmitted, r.From, r.FromKey, r.FromPane, r.FromKind, r.FromWorkspace)
	}
	for try := 0; ; try++ {
		r, ended, err := l.cfg.Outbox.EndRequest(e, outbox.OutcomeNotSubmitted, l.now(), before)
		switch {
		case errors.Is(err, outbox.ErrBusy) && try < 100:
			time.Sleep(2 * time.Millisecond)
			continue
		case err != nil:
			l.log().Warn("request: outcome not recorded", "id", e.ID, "err", err)
		case ended:
			l.log().Info("request ended", "id", r.ID, "to", r.To, "outcome", outbox.OutcomeNotSubmitted)
		}
		return
	}
}

// requestTyped records that message id, if it is a request, was typed at
// at with the recipient at state_change_seq seq.
func (l *Link) requestTyped(id string, at time.Time, seq uint64) {
	if l.cfg.Outbox == nil {
		return
	}
	e, err := l.cfg.Outbox.FindRequest(id)
	if err != nil {
		return
	}
	if err := l.cfg.Outbox.MarkTyped(e, at, seq); err != nil {
		l.log().Warn("request: typing not recorded", "id", id, "err", err)
	}
}

// markReplied ends the request env answers (a held answer counts: it was
// accepted).
func (l *Link) markReplied(s snapshot, target Agent, env Envelope) {
	if env.ReplyTo != "" {
		l.markRepliedID(env.ReplyTo, env.From, env.To)
	}
}

// markRepliedID ends request id as replied when it is a pending request
// from the agent named to, to the agent named from (the answer's sender).
func (l *Link) markRepliedID(id, from, to string) {
	if l.cfg.Outbox == nil {
		return
	}
	e, err := l.cfg.Outbox.FindRequest(id)
	if err != nil {
		return // not a request this machine tracks: a reference sender's, say
	}
	r, err := l.cfg.Outbox.Request(e)
	if err != nil || r.State != outbox.StatePending || r.From != to || r.To != from {
		return
	}
	if _, ended, err := l.cfg.Outbox.EndRequest(e, outbox.OutcomeReplied, l.now(), nil); err != nil {
		l.log().Warn("request: reply not recorded", "id", id, "err", err)
	} else if ended {
		l.log().Debug("request replied", "id", id, "from", to, "to", from)
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

// noticeText is the typed text of a notice: a line for the model, the
// notice as one JSON line, each on lines of their own.
func noticeText(n Notice) string {
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

// ExtractNotices returns every herdr-link/1 notice in text, in order.
func ExtractNotices(text string) []Notice {
	var out []Notice
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], `{"protocol":"herdr-link/1","notice":`)
		if j < 0 {
			break
		}
		s := i + j
		if end, ok := scanObject(text, s); ok {
			var n Notice
			if jsonx.Unmarshal([]byte(text[s:end]), &n) == nil && n.Protocol == Protocol && n.Notice != "" && ValidMessageID(n.About) && ValidName(n.Peer) {
				out = append(out, n)
				i = end
				continue
			}
		}
		i = s + 1
	}
	return out
}

// endRequest gives request e its outcome, and for any outcome but replied
// holds a notice for its sender (unless notices are off). It reports
// whether this call ended it.
func (l *Link) endRequest(e outbox.Entry, outcome string) bool {
	notice := func(r outbox.Request) error {
		if outcome == outbox.OutcomeReplied || l.cfg.NoNotices {
			return nil
		}
		return l.holdNotice(r.ID, r.To, outcome, r.From, r.FromKey, r.FromPane, r.FromKind, r.FromWorkspace)
	}
	r, ended, err := l.cfg.Outbox.EndRequest(e, outcome, l.now(), notice)
	switch {
	case errors.Is(err, outbox.ErrBusy), errors.Is(err, outbox.ErrNotFound):
		return false
	case err != nil:
		l.log().Warn("request: outcome not recorded", "id", e.ID, "err", err)
		return false
	case ended:
		l.log().Debug("request ended", "id", r.ID, "to", r.To, "outcome", outcome)
	}
	return ended
}

// holdNotice holds the notice about message id (to peer) for its sender,
// once: a notice already written for it (in any state) is not written
// again.
func (l *Link) holdNotice(id, peer, what, to, toKey, toPane, toKind, toWorkspace string) error {
	nid := noticeID(id)
	if _, err := l.cfg.Outbox.Find(nid); err == nil {
		return nil
	}
	now := l.now()
	term := toKey
	if strings.HasPrefix(term, "pane:") {
		term = ""
	}
	m := outbox.Message{
		ID: nid, Expires: now.Add(l.holdFor()), To: to, From: peer, TargetKey: toKey, FromKey: toKey,
		PaneID: toPane, TerminalID: term, Kind: toKind, WorkspaceID: toWorkspace, FromPane: toPane,
		Text: noticeText(Notice{Protocol: Protocol, Notice: what, About: id, Peer: peer}), Notice: true,
	}
	if _, err := l.cfg.Outbox.Add(m, now); err != nil {
		return err
	}
	l.kickCourier(l.cfg.Outbox.KeyHash(toKey))
	return nil
}

// tellNotSubmitted tells the sender of held message m that it was typed
// but not submitted: a request ends not_submitted (its notice written
// with the outcome), any other message gets a notice. A notice itself
// ends silently.
func (l *Link) tellNotSubmitted(m outbox.Message) {
	if m.Notice {
		return
	}
	if e, err := l.cfg.Outbox.FindRequest(m.ID); err == nil {
		l.endNotSubmitted(e, true)
		return
	}
	if l.cfg.NoNotices {
		return
	}
	if err := l.holdNotice(m.ID, m.To, outbox.OutcomeNotSubmitted, m.From, m.FromKey, m.FromPane, m.FromKind, m.FromWorkspace); err != nil {
		l.log().Warn("notice not written", "id", m.ID, "err", err)
	}
}
