// Package outbox is the machine-wide, per-user store of herdr-link
// messages held for a target that cannot take them yet.
//
// One Store serves one Herdr server (its socket's identity, like the
// delivery locks): a directory only the user can read, beside the lock
// directory, holding one file per message. A file's name is its index:
//
//	<seq>.<target>.<sender>.<owner>.<id>.<state>
//
// seq is the acceptance time in Unix nanoseconds (20 digits: names sort in
// acceptance order), target and sender are 16 hex digits of a hash of the
// target's and the sender's terminal (they reveal neither), owner is the
// token of the accepting process, id the message id. The state is h
// (held), t (being typed: claimed by the process that holds the target's
// delivery lock, recorded before the prompt) or e (ended without being
// typed, or typed with its fate unknown; the record says why). A file's
// content is written once, to a temporary name, and renamed into place:
// a reader sees a whole record or none. Nothing is synced to disk: the
// store outlives processes, not the machine (a Herdr that restarts has a
// new socket identity, hence a new store; its panes are gone anyway).
//
// Exactly once: only a process holding the target's delivery lock moves
// a message from h to t, and it does so before it types. A t file that a
// lock holder finds was left by a typer that died after its claim: the
// message may have been typed, it is never typed again (it ends as
// [EndMaybeDelivered]).
//
// Accepting processes are alive while they hold the flock of their owner
// file (owner.<token>): a message whose owner file is free was accepted
// by a process that is gone, and any process serving the same Herdr
// delivers it.
package outbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// The states of a message file.
const (
	StateHeld   = 'h'
	StateTyping = 't'
	StateEnded  = 'e'
	// StatePending and StateAnswered are request records: a request
	// waiting for its outcome, and one that has it.
	StatePending  = 'q'
	StateAnswered = 'a'
)

// Why a held message ended without being typed (Message.End).
const (
	EndExpired        = "expired"         // its hold lifetime passed
	EndGone           = "gone"            // its target's pane closed, or another occupant took it
	EndCancelled      = "cancelled"       // an operator cancelled it
	EndMaybeDelivered = "maybe_delivered" // its typer died after the claim
	// EndTyped: a notice that was typed (kept so it is never written twice).
	EndTyped = "typed"
)

// Defaults of a Store's bounds.
const (
	DefaultMaxPerTarget = 64
	DefaultMaxMessages  = 1024
	DefaultMaxBytes     = 64 << 20
	// EndedTTL is how long an ended record is kept: for a late wait on its
	// request, the operator's list, and as the tombstone of a typed notice.
	EndedTTL = 10 * time.Minute
)

// Errors.
var (
	// ErrFull: the target already has MaxPerTarget held messages, or the
	// store holds MaxMessages or MaxBytes.
	ErrFull = errors.New("outbox: full")
	// ErrNotFound: no such message (it was typed, ended or cancelled).
	ErrNotFound = errors.New("outbox: no such message")
	// ErrBadID: Add was given an id that cannot stand in a file name.
	ErrBadID = errors.New("outbox: message id unfit for a file name")
)

// Message is one held message.
type Message struct {
	ID       string    `json:"id"`
	Seq      int64     `json:"seq"`
	Accepted time.Time `json:"accepted"`
	Expires  time.Time `json:"expires"`
	// To and From are the agent names; FromKey and TargetKey the terminal
	// keys of sender and target (a terminal id, or "pane:" and a pane id).
	To        string `json:"to"`
	From      string `json:"from"`
	TargetKey string `json:"target_key"`
	FromKey   string `json:"from_key"`
	// PaneID, TerminalID, Kind and WorkspaceID are the target as resolved
	// at acceptance: it is typed into only if it is still that occupant,
	// in that workspace.
	PaneID      string `json:"pane_id"`
	TerminalID  string `json:"terminal_id"`
	Kind        string `json:"kind"`
	WorkspaceID string `json:"workspace_id"`
	// Session is the target's agent session at acceptance, when Herdr
	// reported one (its source and value): another session is another
	// occupant.
	Session string `json:"session,omitempty"`
	// Reason is why the message was held (a state, a draft, a picker).
	Reason string `json:"reason,omitempty"`
	// FromPane, FromKind and FromWorkspace are the sender's at acceptance
	// (for a notice to it).
	FromPane      string `json:"from_pane"`
	FromKind      string `json:"from_kind,omitempty"`
	FromWorkspace string `json:"from_workspace,omitempty"`
	// Text is what is typed: the wrapped envelope, or a notice.
	Text string `json:"text"`
	// Notice marks a notice of herdr-link to the sender of a request:
	// notices due to one target together are typed as one turn.
	Notice bool `json:"notice,omitempty"`
	// End and Ended are set on an ended record.
	End   string    `json:"end,omitempty"`
	Ended time.Time `json:"ended,omitzero"`

	// Index fields, from the file name (not stored in the content).
	State  byte   `json:"-"`
	Owner  string `json:"-"`
	Target string `json:"-"` // hash of TargetKey
	Sender string `json:"-"` // hash of FromKey
	name   string
}

// Entry is a message as its file name shows it, without its content.
type Entry struct {
	Seq    int64
	Target string
	Sender string
	Owner  string
	ID     string
	State  byte
	name   string
	size   int64 // of a held or typing file, for MaxBytes
}

// Store is the outbox of one Herdr server. Open makes one.
type Store struct {
	// Dir is the store's directory.
	Dir string
	// MaxPerTarget, MaxMessages and MaxBytes bound the held messages
	// (the defaults when zero).
	MaxPerTarget, MaxMessages int
	MaxBytes                  int64

	scope string

	mu      storeLock
	token   string   // this process's owner token ("" until Token)
	alive   *os.File // the owner file's flock, held for the process's life
	ownPath string   // the owner file's path
	lastSeq int64

	// The index (index.go): x is nil until the first look; j is the
	// journal, read up to joff; mtime the directory's modification time
	// the index accounts for; built when it was last listed.
	x     *index
	j     *os.File
	joff  int64
	mtime time.Time
	built time.Time
	// ops counts this process's changes between their file operation
	// and their journal line (see changing).
	ops int
	// journalMax overrides the journal's size bound (tests).
	journalMax int64
	// lg is the request ledger as this process read it (ledgerlog.go);
	// lmu serializes this process's ledger writes (a flock is per open
	// file, not per goroutine; a storeLock for the reason s.mu is one).
	// ledgerMax overrides its bound (tests).
	lg        ledger
	lmu       storeLock
	ledgerMax int64
	// renameLedger, when set, replaces os.Rename for a compacted ledger
	// (tests: a rename that fails, as over an open file on windows).
	renameLedger func(oldpath, newpath string) error
	// spares are this process's spare files (spare.go); refilling is set
	// while a goroutine creates more.
	spares    []string
	refilling bool

	// Spares lets a long-running process keep spare files (spare.go):
	// Release removes them, Prune those of a process that is gone.
	Spares bool

	// Log, when set, receives one line per damaged record set aside.
	Log *slog.Logger
	// scopeOf, when set (NoteSocket), lets Prune remove the stores of
	// sockets that are gone.
	scopeOf func(string) string
}

// Open returns the store of the Herdr server scope (an opaque identity:
// the socket's, see panelock) in its own directory under base (the lock
// directory, already checked private), making the directory 0700.
func Open(base, scope string) (*Store, error) {
	dir := filepath.Join(base, dirName(scope))
	if err := ensurePrivate(dir); err != nil {
		return nil, err
	}
	return &Store{Dir: dir, scope: scope}, nil
}

// dirName is the name of the store directory of scope.
func dirName(scope string) string {
	h := sha256.Sum256([]byte("herdr-link/1 outbox\x00" + scope))
	return "outbox-" + hex.EncodeToString(h[:8])
}

// ensurePrivate makes dir 0700 if needed and checks that it is a
// directory of this user, not a link, with no group or other permission.
func ensurePrivate(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("outbox: %w", err)
	}
	st, err := os.Lstat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("outbox: %w", err)
	case !st.IsDir():
		return fmt.Errorf("outbox: %s is not a directory", dir)
	case st.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("outbox: %s has mode %v, want 0700", dir, st.Mode().Perm())
	case !ownedByMe(st):
		return fmt.Errorf("outbox: %s is owned by another user", dir)
	}
	return nil
}

// KeyHash is the 16 hex digits that stand for a terminal key in file
// names.
func (s *Store) KeyHash(key string) string {
	h := sha256.Sum256([]byte("herdr-link/1 outbox key\x00" + s.scope + "\x00" + key))
	return hex.EncodeToString(h[:8])
}

// nextSeq is the acceptance time of a new message: now in Unix
// nanoseconds, strictly after this process's previous one.
func (s *Store) nextSeq(now time.Time) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := max(now.UnixNano(), s.lastSeq+1)
	s.lastSeq = n
	return n
}

func (s *Store) maxPerTarget() int { return cmpOr(s.MaxPerTarget, DefaultMaxPerTarget) }
func (s *Store) maxMessages() int  { return cmpOr(s.MaxMessages, DefaultMaxMessages) }
func (s *Store) maxBytes() int64   { return cmpOr(s.MaxBytes, DefaultMaxBytes) }

func cmpOr[T int | int64](v, d T) T {
	if v > 0 {
		return v
	}
	return d
}

// FullError says which bound a full store hit.
type FullError struct {
	// Target is true when the target's own bound was hit.
	Target bool
	Limit  int64
}

func (e *FullError) Error() string {
	if e.Target {
		return fmt.Sprintf("outbox: the target already has %d held messages", e.Limit)
	}
	return fmt.Sprintf("outbox: the store is full (%d)", e.Limit)
}

func (e *FullError) Is(target error) bool { return target == ErrFull }

// Add stores m as held, owned by this process, and returns it with its
// index fields set. The bounds are checked first, from the index (a
// store shared by processes may briefly exceed them by what is added
// concurrently): MaxPerTarget held messages per target, MaxMessages
// messages (held, or tracked as requests: a held request counts once)
// and MaxBytes of held files in the store.
func (s *Store) Add(m Message, now time.Time) (Message, error) {
	defer s.changing()()
	if !validID(m.ID) {
		return Message{}, fmt.Errorf("%w: %q", ErrBadID, m.ID)
	}
	tok, err := s.Token()
	if err != nil {
		return Message{}, err
	}
	m.Target, m.Sender = s.KeyHash(m.TargetKey), s.KeyHash(m.FromKey)
	s.mu.Lock()
	if err := s.fresh(); err != nil {
		s.mu.Unlock()
		return Message{}, err
	}
	perTarget, live, bytes := len(s.x.byTarget[m.Target]), len(s.x.live), s.x.bytes
	if s.x.live[m.ID] {
		live-- // its request record counts it already
	}
	s.mu.Unlock()
	switch {
	case m.Notice:
		// Notices are small and bounded by the requests they are about.
	case perTarget >= s.maxPerTarget():
		return Message{}, &FullError{Target: true, Limit: int64(s.maxPerTarget())}
	case live >= s.maxMessages():
		return Message{}, &FullError{Limit: int64(s.maxMessages())}
	case bytes+int64(len(m.Text)) > s.maxBytes():
		return Message{}, &FullError{Limit: s.maxBytes()}
	}
	m.Seq = s.nextSeq(now)
	m.Accepted = now
	m.Owner, m.State = tok, StateHeld
	m.name = fileName(m.Seq, m.Target, m.Sender, m.Owner, m.ID, StateHeld)
	n, err := s.write(m.name, m)
	if err != nil {
		return Message{}, err
	}
	s.note(nil, m.entry(n))
	return m, nil
}

// entry is the index entry of m, whose file has size bytes.
func (m Message) entry(size int64) Entry {
	return Entry{Seq: m.Seq, Target: m.Target, Sender: m.Sender, Owner: m.Owner, ID: m.ID, State: m.State, name: m.name, size: size}
}

// note records in the index and the journal that the files gone went
// and those of added appeared.
func (s *Store) note(gone []string, added ...Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changed(gone, added...)
}

// write stores m under name atomically (see writeNew) and returns the
// file's size.
func (s *Store) write(name string, m Message) (int64, error) {
	b, err := jsonx.Marshal(m)
	if err != nil {
		return 0, fmt.Errorf("outbox: %w", err)
	}
	return int64(len(b)), s.writeNew(name, b)
}

// Read returns the message of entry e with its content. A record that
// cannot be one (a link, not a regular file, over MaxRecordBytes, not
// JSON) is set aside as damaged: [ErrDamaged].
func (s *Store) Read(e Entry) (Message, error) {
	f, err := s.openEntry(e, os.O_RDONLY)
	if err != nil {
		return Message{}, err
	}
	defer f.Close()
	return s.readMessage(f, e)
}

// Claim moves a held message to typing. The caller must hold the
// target's delivery lock, and types the message only when Claim returned
// nil: the claim is on disk before the prompt.
func (s *Store) Claim(m *Message) error {
	if m.State != StateHeld {
		return fmt.Errorf("outbox: claim of a message in state %c", m.State)
	}
	return s.move(m, StateTyping, "claim")
}

// Unclaim moves a claimed message back to held: Herdr refused it before
// typing anything.
func (s *Store) Unclaim(m *Message) error {
	if m.State != StateTyping {
		return fmt.Errorf("outbox: unclaim of a message in state %c", m.State)
	}
	return s.move(m, StateHeld, "unclaim")
}

// move renames m's file to state st.
func (s *Store) move(m *Message, st byte, what string) error {
	defer s.changing()()
	old := m.name
	name := fileName(m.Seq, m.Target, m.Sender, m.Owner, m.ID, st)
	if err := os.Rename(filepath.Join(s.Dir, old), filepath.Join(s.Dir, name)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			s.note([]string{old})
			return ErrNotFound
		}
		return fmt.Errorf("outbox: %s: %w", what, err)
	}
	size := int64(-1)
	if info, err := os.Lstat(filepath.Join(s.Dir, name)); err == nil {
		size = info.Size()
	}
	m.name, m.State = name, st
	s.note([]string{old}, m.entry(max(size, 0)))
	return nil
}

// Done removes a message that was typed.
func (s *Store) Done(m Message) error {
	defer s.changing()()
	if err := s.recycle(m.name); !removed(err) {
		return fmt.Errorf("outbox: %w", err)
	}
	s.note([]string{m.name})
	return nil
}

// End records that m ended without being typed (or typed with its fate
// unknown), why, and removes its held or typing file. The ended record
// keeps everything but the text.
func (s *Store) End(m Message, why string, now time.Time) error {
	defer s.changing()()
	old := m.name
	m.End, m.Ended, m.Text = why, now, ""
	m.name, m.State = fileName(m.Seq, m.Target, m.Sender, m.Owner, m.ID, StateEnded), StateEnded
	n, err := s.write(m.name, m)
	if err != nil {
		return err
	}
	s.note(nil, m.entry(n))
	if err := s.recycle(old); !removed(err) {
		return fmt.Errorf("outbox: %w", err)
	}
	s.note([]string{old})
	return nil
}
