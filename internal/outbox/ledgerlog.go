package outbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// The ledger file.
//
// Request records live in one file of the store, the ledger, appended to
// and never rewritten in place: a request costs one line, not a file (a
// new file is most of what a store write costs on a disk; see spare.go).
// The ledger is the truth for requests, as the directory is for held
// messages. Its lines:
//
//	+<name> <record JSON>   a request recorded (its entry's name, its record)
//	t<id> <unix ns> <seq>   it was typed, the recipient then at seq
//	e<id> <outcome> <unix ns>  it ended
//	-<id>                   its record was removed (forgotten, evicted, pruned)
//	!                       this ledger was replaced: read the new one from its start
//
// Every line is written whole by one write(2) under the ledger's
// exclusive flock, which also makes ending a request exclusive between
// processes (EndRequest runs its before function under it). Readers take
// no lock: they apply whole lines only (up to the last newline), so a
// line being written is read at the next look. A line that cannot be
// read (a writer killed mid-line: the next writer ends it first) is
// skipped. Replaying a line is idempotent.
//
// Every process keeps every record in memory, rebuilt from the ledger
// when it opens it and kept by the lines appended since. A ledger grown
// past ledgerMax (and to twice its live records) is replaced, under the
// flock, by one holding the live records, and its last line is "!".

const (
	ledgerName = "ledger"
	// ledgerMax is the size past which the ledger is compacted
	// (Store.ledgerMax, when set, in tests).
	ledgerMax = 1 << 20
	// maxLedgerLine bounds one line: a record is a few hundred bytes.
	maxLedgerLine = 16 << 10
)

// Request is a message that expects a reply, tracked from its acceptance
// until its outcome. Its record is a line of the ledger (ledgerlog.go),
// and its entry's name (never a file's) has the message's index, with
// state q (pending) or a (it has its outcome); the record holds no text.
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
	size   int64 // of its ledger line, for compaction
}

// Entry returns the index entry of r.
func (r Request) Entry() Entry {
	return Entry{Seq: r.Seq, Target: r.Target, Sender: r.Sender, Owner: r.Owner, ID: r.ID, State: r.State, name: r.name}
}

// ledger is one process's view of the ledger file.
type ledger struct {
	r     *os.File // read at off, without a lock
	rInfo os.FileInfo
	off   int64
	end   int64    // the size seen at the last look (off < end: a line being written)
	w     *os.File // the writers' descriptor: flocked, O_APPEND
	wInfo os.FileInfo
	// skipping: the read offset is inside an overlong line.
	skipping bool
	// checked is when the reader last made sure that its file is the one
	// at the ledger's path.
	checked time.Time
	recs    map[string]*Request
	live    int64 // bytes of the live records' add lines, for compaction
	retry   int64 // a failed compaction is tried again past this size
}

// ledgerPath is the ledger file's path.
func (s *Store) ledgerPath() string { return filepath.Join(s.Dir, ledgerName) }

// openLedgerFile opens (creating it when missing) the ledger: a regular
// file of this user, not a link.
func (s *Store) openLedgerFile() (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(s.ledgerPath(), os.O_RDWR|os.O_CREATE|os.O_APPEND|openSafe, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("outbox: ledger: %w", err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || !ownedByMe(st) {
		f.Close()
		return nil, nil, fmt.Errorf("outbox: ledger %s is not a regular file of this user", s.ledgerPath())
	}
	return f, st, nil
}

// readLedger brings the records up to the ledger's end (the caller holds
// s.mu), opening it on first use: every line appended since the last
// look, and the whole new ledger after a "!".
func (s *Store) readLedger() error {
	if s.lg.r == nil {
		f, info, err := s.openLedgerFile()
		if err != nil {
			return err
		}
		s.resetLedger(f, info)
	}
	if time.Since(s.lg.checked) > rebuildEvery {
		// A ledger replaced without its "!" (its replacer killed between
		// the rename and the "!", an operator's doing) is found here, in
		// a process that does not write, at worst after rebuildEvery.
		s.lg.checked = time.Now()
		if cur, err := os.Lstat(s.ledgerPath()); err == nil && !os.SameFile(cur, s.lg.rInfo) {
			if f, info, err := s.openLedgerFile(); err == nil {
				s.resetLedger(f, info)
			}
		}
	}
	for range 8 {
		end, err := s.lg.r.Seek(0, io.SeekEnd)
		if err != nil {
			return fmt.Errorf("outbox: ledger: %w", err)
		}
		if end == s.lg.end {
			return nil
		}
		replaced, err := s.applyLedger(end)
		if err != nil {
			return err
		}
		if !replaced {
			s.lg.end = end
			return nil
		}
		f, info, err := s.openLedgerFile()
		if err != nil {
			return err
		}
		s.resetLedger(f, info)
	}
	return errors.New("outbox: ledger: replaced over and over while read")
}

// resetLedger starts reading the ledger file f from its start, with no
// records: those of the old one leave the index.
func (s *Store) resetLedger(f *os.File, info os.FileInfo) {
	if s.lg.r != nil {
		s.lg.r.Close()
	}
	if s.x != nil {
		for _, r := range s.lg.recs {
			s.x.drop(r.name)
		}
	}
	s.lg.r, s.lg.rInfo, s.lg.off, s.lg.end, s.lg.skipping = f, info, 0, 0, false
	s.lg.checked = time.Now()
	s.lg.recs, s.lg.live, s.lg.retry = map[string]*Request{}, 0, 0
}

// applyLedger applies the whole lines between the read offset and end;
// replaced is true when it read "!".
func (s *Store) applyLedger(end int64) (replaced bool, err error) {
	// Read in chunks: a ledger grown (or made) far past its bound costs
	// a chunk's memory, not its size.
	buf := make([]byte, min(end-s.lg.off, ledgerChunk))
	for s.lg.off < end {
		n, err := s.lg.r.ReadAt(buf[:min(end-s.lg.off, int64(len(buf)))], s.lg.off)
		if err != nil && !errors.Is(err, io.EOF) {
			return false, fmt.Errorf("outbox: ledger: %w", err)
		}
		if n == 0 {
			return false, nil
		}
		at := s.lg.off
		if s.applyLines(buf[:n]) {
			return true, nil
		}
		if s.lg.off == at {
			if int64(n) < ledgerChunk || end-at <= ledgerChunk {
				return false, nil // a line being written
			}
			// A chunk without a line's end: no line this store writes is
			// that long. Skipped, to the end of the line it is in.
			s.lg.off += int64(n)
			s.lg.skipping = true
		}
	}
	return false, nil
}

// ledgerChunk is how much of the ledger is read at once.
const ledgerChunk = 1 << 20

// applyLines applies the whole lines of buf, read at the read offset,
// and moves the offset past them; true when it read "!". A line being
// written is read at the next look.
func (s *Store) applyLines(buf []byte) (replaced bool) {
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return false
		}
		line := buf[:i]
		if s.lg.skipping {
			// The end of an overlong line.
			s.lg.skipping = false
			s.lg.off += int64(i + 1)
			buf = buf[i+1:]
			continue
		}
		if string(line) == "!" {
			// The offset stays at the "!": a new ledger that cannot be
			// opened yet is tried again at the next look.
			return true
		}
		s.lg.off += int64(i + 1)
		buf = buf[i+1:]
		s.applyLedgerLine(line)
	}
}

// applyLedgerLine applies one line; one that cannot be read is skipped.
func (s *Store) applyLedgerLine(l []byte) {
	if len(l) < 2 {
		return
	}
	rest := string(l[1:])
	switch l[0] {
	case '+':
		name, body, ok := strings.Cut(rest, " ")
		e, eok := parseName(name)
		if !ok || !eok || !e.IsRequest() {
			return
		}
		var r Request
		if jsonx.Unmarshal([]byte(body), &r) != nil || r.ID != e.ID || r.Seq != e.Seq {
			return
		}
		r.Owner, r.Target, r.Sender, r.State, r.name = e.Owner, e.Target, e.Sender, e.State, name
		s.putRecord(&r, int64(len(l)+1))
	case 't':
		id, v, _ := strings.Cut(rest, " ")
		at, seq, _ := strings.Cut(v, " ")
		ns, err1 := strconv.ParseInt(at, 10, 64)
		sq, err2 := strconv.ParseUint(seq, 10, 64)
		r := s.lg.recs[id]
		if r == nil || err1 != nil || err2 != nil || r.State != StatePending || !r.Typed.IsZero() {
			return
		}
		r.Typed, r.TypedSeq = time.Unix(0, ns), sq
	case 'e':
		id, v, _ := strings.Cut(rest, " ")
		outcome, at, _ := strings.Cut(v, " ")
		ns, err := strconv.ParseInt(at, 10, 64)
		r := s.lg.recs[id]
		if r == nil || err != nil || outcome == "" || r.State != StatePending {
			return
		}
		ended := *r
		ended.Outcome, ended.Ended = outcome, time.Unix(0, ns)
		ended.State = StateAnswered
		ended.name = fileName(r.Seq, r.Target, r.Sender, r.Owner, r.ID, StateAnswered)
		s.dropRecord(id)
		s.putRecord(&ended, r.size)
	case '-':
		s.dropRecord(rest)
	}
}

// putRecord adds record r (whose add line is size bytes) to the records
// and the index.
func (s *Store) putRecord(r *Request, size int64) {
	s.dropRecord(r.ID)
	r.size = size
	s.lg.recs[r.ID] = r
	s.lg.live += size
	if s.x != nil {
		s.x.put(r.Entry())
	}
}

// dropRecord removes request id's record from the records and the index.
func (s *Store) dropRecord(id string) {
	r := s.lg.recs[id]
	if r == nil {
		return
	}
	delete(s.lg.recs, id)
	s.lg.live -= r.size
	if s.x != nil {
		s.x.drop(r.name)
	}
}

// indexRecords puts every record into a new index (the caller holds s.mu).
func (s *Store) indexRecords() {
	for _, r := range s.lg.recs {
		s.x.put(r.Entry())
	}
}

// record returns a copy of request id's record (the caller holds s.mu).
func (s *Store) record(id string) (Request, bool) {
	r := s.lg.recs[id]
	if r == nil {
		return Request{}, false
	}
	return *r, true
}

// addLine is the ledger line that records r.
func addLine(r Request) (string, error) {
	b, err := jsonx.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("outbox: %w", err)
	}
	l := "+" + r.name + " " + string(b) + "\n"
	if len(l) > maxLedgerLine {
		return "", fmt.Errorf("outbox: a request record of %d bytes, over the bound of %d", len(l), maxLedgerLine)
	}
	return l, nil
}
