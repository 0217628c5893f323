package outbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// The outcomes of a request (Request.Outcome).
const (
	OutcomeReplied = "replied" // the recipient answered it
	OutcomeHandled = "handled" // the recipient's turn with it ended, no answer came
	OutcomeBlocked = "blocked" // the recipient stopped at an interactive prompt while on it
	OutcomeGone    = "gone"    // the recipient's pane closed, or another occupant took it
	OutcomeExpired = "expired" // its lifetime passed
	// OutcomeCancelled: it was held, and an operator cancelled it.
	OutcomeCancelled = "cancelled"
	// OutcomeNotSubmitted: it was typed, but its text stayed in the
	// recipient's composer, unsent (its Enter did not submit it).
	OutcomeNotSubmitted = "not_submitted"
)

// EndNotSubmitted is a held message's End when it was typed but its text
// stayed in the target's composer, unsent.
const EndNotSubmitted = "not_submitted"

// Request is a message that expects a reply, tracked from its acceptance
// until its outcome. Its record's file name has the message's index, with
// state q (pending) or a (it has its outcome); its content is small (no
// text) and is read and written in place under the record's flock, so a
// record has one inode for its whole life.
type Request struct {
	ID       string    `json:"id"`
	Seq      int64     `json:"seq"`
	Accepted time.Time `json:"accepted"`
	Expires  time.Time `json:"expires"`
	// To and From are the agent names, TargetKey and FromKey their
	// terminal keys; PaneID, TerminalID, Kind and WorkspaceID are the
	// recipient as resolved; FromPane the sender's pane.
	To          string `json:"to"`
	From        string `json:"from"`
	TargetKey   string `json:"target_key"`
	FromKey     string `json:"from_key"`
	PaneID      string `json:"pane_id"`
	TerminalID  string `json:"terminal_id"`
	Kind        string `json:"kind"`
	WorkspaceID string `json:"workspace_id"`
	FromPane    string `json:"from_pane"`
	// FromKind and FromWorkspace are the sender's, for its notices.
	FromKind      string `json:"from_kind"`
	FromWorkspace string `json:"from_workspace"`
	// Typed is when it was typed into the recipient's pane (zero while it
	// is held); TypedSeq is the recipient's state_change_seq Herdr showed
	// then (0 when not known).
	Typed    time.Time `json:"typed,omitzero"`
	TypedSeq uint64    `json:"typed_seq,omitempty"`
	// Outcome and Ended are set once it ended.
	Outcome string    `json:"outcome,omitempty"`
	Ended   time.Time `json:"ended,omitzero"`

	State  byte   `json:"-"`
	Owner  string `json:"-"`
	Target string `json:"-"`
	Sender string `json:"-"`
	name   string
}

// Entry returns the index entry of r.
func (r Request) Entry() Entry {
	return Entry{Seq: r.Seq, Target: r.Target, Sender: r.Sender, Owner: r.Owner, ID: r.ID, State: r.State, name: r.name}
}

// AddRequest records r as pending, owned by this process. Request
// records count towards MaxMessages with the held messages: when the
// store is full, the oldest records of requests that have their outcome
// (kept only for a late wait) make room, and with none left it is
// [ErrFull].
func (s *Store) AddRequest(r Request, now time.Time) (Request, error) {
	defer s.changing()()
	if !validID(r.ID) {
		return Request{}, fmt.Errorf("%w: %q", ErrBadID, r.ID)
	}
	tok, err := s.Token()
	if err != nil {
		return Request{}, err
	}
	if err := s.roomForRequest(r.ID); err != nil {
		return Request{}, err
	}
	r.Target, r.Sender = s.KeyHash(r.TargetKey), s.KeyHash(r.FromKey)
	r.Seq, r.Accepted = s.nextSeq(now), now
	r.Owner, r.State = tok, StatePending
	r.name = fileName(r.Seq, r.Target, r.Sender, r.Owner, r.ID, StatePending)
	b, err := jsonx.Marshal(r)
	if err != nil {
		return Request{}, fmt.Errorf("outbox: %w", err)
	}
	if err := s.writeNew(r.name, b); err != nil {
		return Request{}, err
	}
	e := r.Entry()
	e.size = int64(len(b))
	s.note(nil, e)
	return r, nil
}

// roomForRequest makes room for one more message, id, removing the
// oldest answered request records if needed.
func (s *Store) roomForRequest(id string) error {
	s.mu.Lock()
	if err := s.fresh(); err != nil {
		s.mu.Unlock()
		return err
	}
	over := len(s.x.live) - s.maxMessages() + 1
	if s.x.live[id] {
		over--
	}
	var answered []Entry
	if over > 0 {
		for n := range s.x.visible {
			if e := s.x.byName[n]; e.State == StateAnswered {
				answered = append(answered, e)
			}
		}
	}
	s.mu.Unlock()
	if over <= 0 {
		return nil
	}
	if len(answered) < over {
		return &FullError{Limit: int64(s.maxMessages())}
	}
	slices.SortFunc(answered, byAcceptance)
	var gone []string
	for _, e := range answered[:over] {
		if removed(s.recycle(e.name)) {
			gone = append(gone, e.name)
		}
	}
	s.note(gone)
	return nil
}

// writeNew stores b as file name atomically: written to a spare or a
// temporary file, then renamed into place (a reader sees all of it or
// nothing).
func (s *Store) writeNew(name string, b []byte) error {
	if s.writeSpare(name, b) {
		return nil
	}
	f, err := os.CreateTemp(s.Dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("outbox: write: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.Dir, name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}

// FindRequest returns the request record of message id.
func (s *Store) FindRequest(id string) (Entry, error) {
	return s.byID(id, Entry.IsRequest)
}

// Request reads the request record of e.
func (s *Store) Request(e Entry) (Request, error) {
	f, e, err := s.openRecord(e)
	if err != nil {
		return Request{}, err
	}
	defer f.Close()
	if err := lockShared(f); err != nil {
		return Request{}, err
	}
	return s.decodeRecord(f, e)
}

// openRecord opens the record of e, and returns the entry of the file
// it opened (its outcome's, when it moved there since the listing).
func (s *Store) openRecord(e Entry) (*os.File, Entry, error) {
	f, err := s.openEntry(e, os.O_RDWR)
	if errors.Is(err, ErrNotFound) && e.State == StatePending {
		e.State = StateAnswered
		e.name = fileName(e.Seq, e.Target, e.Sender, e.Owner, e.ID, StateAnswered)
		f, err = s.openEntry(e, os.O_RDWR)
	}
	return f, e, err
}

// decodeRecord reads the record f of entry e (the caller holds its
// flock); one that cannot be read is set aside as damaged.
func (s *Store) decodeRecord(f *os.File, e Entry) (Request, error) {
	b, err := readBounded(f)
	if err != nil {
		return Request{}, s.unreadable(f, e, err.Error())
	}
	var r Request
	if err := jsonx.Unmarshal(b, &r); err != nil {
		return Request{}, s.unreadable(f, e, "not a request record: "+err.Error())
	}
	if !isRecord(r.ID, r.Seq, e) && s.moved(f, e) {
		return Request{}, ErrNotFound // recycled since it was opened
	}
	r.Owner, r.Target, r.Sender = e.Owner, e.Target, e.Sender
	r.State = StatePending
	r.name = fileName(e.Seq, e.Target, e.Sender, e.Owner, e.ID, StatePending)
	if r.Outcome != "" {
		r.State = StateAnswered
		r.name = fileName(e.Seq, e.Target, e.Sender, e.Owner, e.ID, StateAnswered)
	}
	return r, nil
}

// rewrite replaces the content of the locked record f by r, in place.
func rewrite(f *os.File, r Request) error {
	b, err := jsonx.Marshal(r)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if err := f.Truncate(int64(len(b))); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}

// MarkTyped records that the pending request of e was typed at at, the
// recipient then at state_change_seq seq (0 when not known).
func (s *Store) MarkTyped(e Entry, at time.Time, seq uint64) error {
	f, e, err := s.openRecord(e)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lockExclusive(f, true); err != nil {
		return err
	}
	r, err := s.decodeRecord(f, e)
	if err != nil {
		return err
	}
	if r.State != StatePending || !r.Typed.IsZero() {
		return nil
	}
	r.Typed, r.TypedSeq = at, seq
	return rewrite(f, r)
}

// ErrBusy: another process is ending the request right now.
var ErrBusy = errors.New("outbox: the request is being ended by another process")

// EndRequest gives the pending request of e its outcome. before, when
// set, runs first under the record's lock (the caller writes the notice
// there, idempotently: a crash after it and before the outcome is
// written runs it again); an error from it leaves the request pending.
// It returns the request as ended, and false when the request had its
// outcome already. ErrBusy: another process is ending it; ErrNotFound:
// its record is gone (removed, or removed while it was being ended).
func (s *Store) EndRequest(e Entry, outcome string, now time.Time, before func(Request) error) (Request, bool, error) {
	f, e, err := s.openRecord(e)
	if err != nil {
		return Request{}, false, err
	}
	defer f.Close()
	if err := lockExclusive(f, false); err != nil {
		return Request{}, false, err
	}
	r, err := s.decodeRecord(f, e)
	if err != nil {
		return Request{}, false, err
	}
	if r.State != StatePending {
		return r, false, nil
	}
	if before != nil {
		if err := before(r); err != nil {
			return Request{}, false, err
		}
	}
	r.Outcome, r.Ended = outcome, now
	if err := rewrite(f, r); err != nil {
		return Request{}, false, err
	}
	to := fileName(r.Seq, r.Target, r.Sender, r.Owner, r.ID, StateAnswered)
	from := r.name
	defer s.changing()()
	switch err := os.Rename(filepath.Join(s.Dir, from), filepath.Join(s.Dir, to)); {
	case errors.Is(err, fs.ErrNotExist):
		// Its record was removed meanwhile (its request forgotten by
		// another process, its store pruned): not ended, and nothing to
		// journal for a file that is not there.
		return Request{}, false, ErrNotFound
	case err != nil:
		return Request{}, false, fmt.Errorf("outbox: %w", err)
	}
	r.State, r.name = StateAnswered, to
	s.note([]string{from}, r.Entry())
	return r, true, nil
}

// ForgetRequest removes the record of a request that was never handed
// over (its typing failed before anything reached the pane).
func (s *Store) ForgetRequest(r Request) error {
	defer s.changing()()
	if err := s.recycle(r.name); !removed(err) {
		return fmt.Errorf("outbox: %w", err)
	}
	s.note([]string{r.name})
	return nil
}
