package outbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The index.
//
// The directory is the truth; every process keeps an in-memory index of
// it (every entry by name, by message id, the visible held entries per
// target, the visible entries per sender, and the counts the bounds need),
// so that accepting a message, a sender's listing and a target's next
// message cost the same whatever the store holds.
//
// Processes tell each other what they changed through the journal, a
// file of the store appended to after each change of a file name, under
// its exclusive flock: "+<name> <size>" (an entry appeared), "-<name>"
// (it went). A process reads what others appended since its last look
// before it answers from its index (a read of a few bytes under the
// shared flock; neither when the journal still ends where this process
// last read it and the directory's modification time has not moved).
// Replaying a line is idempotent, so a line that repeats what a listing
// already showed does no harm. A journal that grew past journalMax is
// replaced by an empty one: the last line of the old one is "!", and
// whoever reads it lists the directory again.
//
// The index is rebuilt from a listing of the directory when the
// directory changed without a journal line explaining it (its
// modification time moved while no line came: a process that died
// between a rename and its line, an older herdr-link, an operator's rm),
// and at least every rebuildEvery in any case.

const (
	journalName = "journal"
	// journalMax is the size past which the journal is replaced
	// (Store.journalMax, when set, in tests).
	journalMax   = 1 << 20
	rebuildEvery = 10 * time.Second
	// journalTries bounds the tries for the journal's flock (see
	// lockJournal): past them, a reader lists the directory and a writer
	// leaves its change to the others' listings.
	journalTries = 2000
)

// index is one process's picture of the store directory.
type index struct {
	byName map[string]Entry
	byID   map[string][]string
	// visible are the entries listed: all but a held or typing entry
	// whose message also has an ended one (a crash between End's steps).
	visible  map[string]bool
	byTarget map[string]map[string]Entry // visible held or typing entries
	bySender map[string]map[string]Entry // visible entries
	live     map[string]bool             // ids with a visible held entry or a request record
	pending  map[string]Entry            // visible pending request records
	held     int
	bytes    int64
	requests int
	sorted   []Entry // List's answer; nil when stale
}

func newIndex() *index {
	return &index{byName: map[string]Entry{}, byID: map[string][]string{}, visible: map[string]bool{},
		byTarget: map[string]map[string]Entry{}, bySender: map[string]map[string]Entry{}, live: map[string]bool{}, pending: map[string]Entry{}}
}

// put records entry e (of size bytes, for a held file).
func (x *index) put(e Entry) {
	if old, ok := x.byName[e.name]; ok && old.size == e.size {
		return
	}
	x.unindex(e.ID)
	if _, ok := x.byName[e.name]; !ok {
		x.byID[e.ID] = append(x.byID[e.ID], e.name)
	}
	x.byName[e.name] = e
	x.reindex(e.ID)
}

// drop forgets the entry named name.
func (x *index) drop(name string) {
	e, ok := x.byName[name]
	if !ok {
		return
	}
	x.unindex(e.ID)
	delete(x.byName, name)
	names := slices.DeleteFunc(x.byID[e.ID], func(n string) bool { return n == name })
	if len(names) == 0 {
		delete(x.byID, e.ID)
	} else {
		x.byID[e.ID] = names
	}
	x.reindex(e.ID)
}

// unindex takes message id's entries out of the derived indexes.
func (x *index) unindex(id string) {
	x.sorted = nil
	if x.live[id] {
		delete(x.live, id)
	}
	for _, n := range x.byID[id] {
		if !x.visible[n] {
			continue
		}
		delete(x.visible, n)
		e := x.byName[n]
		delFrom(x.bySender, e.Sender, n)
		if e.Held() {
			delFrom(x.byTarget, e.Target, n)
			x.held--
			x.bytes -= e.size
		}
		if e.IsRequest() {
			x.requests--
		}
		delete(x.pending, n)
	}
}

// reindex puts message id's entries into the derived indexes.
func (x *index) reindex(id string) {
	ended := false
	for _, n := range x.byID[id] {
		if x.byName[n].State == StateEnded {
			ended = true
		}
	}
	for _, n := range x.byID[id] {
		e := x.byName[n]
		if e.Held() && ended {
			continue
		}
		x.visible[n] = true
		addTo(x.bySender, e.Sender, e)
		if e.Held() {
			addTo(x.byTarget, e.Target, e)
			x.held++
			x.bytes += e.size
			x.live[id] = true
		}
		if e.IsRequest() {
			x.requests++
			x.live[id] = true
		}
		if e.Pending() {
			x.pending[n] = e
		}
	}
}

func addTo(m map[string]map[string]Entry, k string, e Entry) {
	s := m[k]
	if s == nil {
		s = map[string]Entry{}
		m[k] = s
	}
	s[e.name] = e
}

func delFrom(m map[string]map[string]Entry, k, name string) {
	if s := m[k]; s != nil {
		delete(s, name)
		if len(s) == 0 {
			delete(m, k)
		}
	}
}

// inOrder returns the entries of set in acceptance order.
func inOrder(set map[string]Entry, keep func(Entry) bool) []Entry {
	out := make([]Entry, 0, len(set))
	for _, e := range set {
		if keep == nil || keep(e) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, byAcceptance)
	return out
}

func byAcceptance(a, b Entry) int {
	if a.Seq != b.Seq {
		return cmpInt(a.Seq, b.Seq)
	}
	return strings.Compare(a.name, b.name)
}

// errStale: the journal says the index must be rebuilt from a listing.
var errStale = errors.New("outbox: index stale")

// fresh brings s's index up to date (the caller holds s.mu): the files'
// entries, then the ledger's records.
func (s *Store) fresh() error {
	if err := s.freshFiles(); err != nil {
		return err
	}
	return s.readLedger()
}

// freshFiles brings the index's file entries up to date.
func (s *Store) freshFiles() error {
	if s.x == nil || time.Since(s.built) > rebuildEvery {
		return s.rebuild()
	}
	st, err := os.Stat(s.Dir)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if st.ModTime().Equal(s.mtime) && s.journalUnchanged() {
		// Nobody changed a name or appended a line since the last look:
		// the index is current without the journal's flock and read.
		return nil
	}
	n, err := s.tail(false)
	switch {
	case err != nil:
		return s.rebuild()
	case n == 0 && !st.ModTime().Equal(s.mtime) && s.ops > 0:
		// A change of this process's own is between its file operation
		// and its journal line: that line (changed) takes the new time.
		return nil
	case n == 0 && !st.ModTime().Equal(s.mtime):
		// The directory changed and nobody said how.
		return s.rebuild()
	}
	s.mtime = st.ModTime()
	return nil
}

// changing notes a change of this process's in flight until the
// returned function runs (after its journal line): a look meanwhile
// (fresh) does not take the directory's new time for a change nobody
// described and list it all. Another process's undescribed change then
// is listed at the periodic rebuild, as when changed's look at the time
// takes it in.
func (s *Store) changing() func() {
	s.mu.Lock()
	s.ops++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.ops--
		s.mu.Unlock()
	}
}

// journalUnchanged reports whether the journal ends where this process
// last read it. A line appended since (a replaced journal's "!"
// included) makes it longer.
func (s *Store) journalUnchanged() bool {
	if s.j == nil {
		return false
	}
	// The journal is opened O_APPEND and read with ReadAt: its offset is
	// free, and seeking to its end reads its size without allocating.
	end, err := s.j.Seek(0, io.SeekEnd)
	return err == nil && end == s.joff
}

// tail applies what others appended to the journal since this process's
// last look, under the journal's flock (exclusive when excl: the caller
// appends next, and unlocks). It returns how many lines it applied.
func (s *Store) tail(excl bool) (int, error) {
	if s.j == nil {
		return 0, errStale
	}
	lock := func() error { return lockJournal(s.j, false, journalTries) }
	if excl {
		lock = func() error { return lockWriter(s.j) }
	}
	if err := lock(); err != nil {
		return 0, err
	}
	n, err := s.applyJournal()
	if !excl || err != nil {
		unlock(s.j)
	}
	return n, err
}

// applyJournal reads the journal from this process's offset to its end
// and applies its whole lines (the caller holds its flock).
func (s *Store) applyJournal() (int, error) {
	var buf [4096]byte
	n := 0
	for {
		k, err := s.j.ReadAt(buf[:], s.joff)
		chunk := buf[:k]
		for {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				break
			}
			if !s.applyLine(chunk[:i]) {
				return n, errStale
			}
			n++
			s.joff += int64(i + 1)
			chunk = chunk[i+1:]
		}
		if errors.Is(err, io.EOF) || k < len(buf) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("outbox: journal: %w", err)
		}
		if len(chunk) == len(buf) {
			return n, errStale // a line longer than any this store writes
		}
	}
}

// applyLine applies one journal line; false for "!" and for a line it
// cannot read (the index must then be rebuilt).
func (s *Store) applyLine(l []byte) bool {
	if len(l) < 2 {
		return false
	}
	switch l[0] {
	case '+':
		name, size, ok := strings.Cut(string(l[1:]), " ")
		e, eok := parseName(name)
		sz, err := strconv.ParseInt(size, 10, 64)
		if !ok || !eok || err != nil || sz < 0 {
			return false
		}
		if e.IsRequest() {
			return true // an older herdr-link's record file (see rebuild)
		}
		e.size = sz
		s.x.put(e)
		return true
	case '-':
		s.x.drop(string(l[1:]))
		return true
	}
	return false
}

// openJournal opens (creating it when missing) the journal file: a
// regular file of this user, not a link.
func (s *Store) openJournal() (*os.File, error) {
	p := filepath.Join(s.Dir, journalName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_APPEND|openSafe, 0o600)
	if err != nil {
		return nil, fmt.Errorf("outbox: journal: %w", err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || !ownedByMe(st) {
		f.Close()
		return nil, fmt.Errorf("outbox: journal %s is not a regular file of this user", p)
	}
	return f, nil
}

// rebuild lists the directory into a new index (the caller holds s.mu).
// The journal's end is noted first: whatever is appended after it is
// replayed over the listing.
func (s *Store) rebuild() error {
	if s.j != nil {
		s.j.Close()
		s.j = nil
	}
	j, err := s.openJournal()
	if err != nil {
		return err
	}
	// Under the shared flock: no line is half written at the end noted.
	locked := lockJournal(j, false, journalTries) == nil
	st, err := j.Stat()
	if locked {
		unlock(j)
	}
	if err != nil {
		j.Close()
		return fmt.Errorf("outbox: journal: %w", err)
	}
	s.j, s.joff = j, st.Size()
	dst, err := os.Stat(s.Dir)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	taken := time.Now()
	d, err := os.ReadDir(s.Dir)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	x := newIndex()
	for _, de := range d {
		e, ok := parseName(de.Name())
		if !ok || e.IsRequest() {
			// A request's record is the ledger's; a file of one is an
			// older herdr-link's, taken into the ledger by Prune.
			continue
		}
		if e.Held() {
			if info, err := de.Info(); err == nil {
				e.size = info.Size()
			}
		}
		x.put(e)
	}
	s.x, s.mtime, s.built = x, dst.ModTime(), taken
	s.indexRecords()
	// A "!" already in this journal (it was replaced since it was opened)
	// is seen by the next look, which lists again.
	return nil
}

// changed records in the index and the journal that the entries gone
// went and the entries added appeared, after the files were renamed,
// written or removed (the caller holds s.mu). A journal that cannot be
// written leaves the change to the listings of the other processes.
func (s *Store) changed(gone []string, added ...Entry) {
	if s.x == nil {
		if s.rebuild() != nil {
			return
		}
	}
	var b strings.Builder
	for _, n := range gone {
		b.WriteString("-" + n + "\n")
	}
	for _, e := range added {
		fmt.Fprintf(&b, "+%s %d\n", e.name, e.size)
	}
	ok := s.appendJournal(b.String())
	for _, n := range gone {
		s.x.drop(n)
	}
	for _, e := range added {
		s.x.put(e)
	}
	if !ok {
		s.x = nil // listed again at the next look
		return
	}
	if st, err := os.Stat(s.Dir); err == nil {
		s.mtime = st.ModTime()
	}
}

// appendJournal appends lines to the journal after applying what others
// appended, replacing a journal grown past journalMax by a new one.
func (s *Store) appendJournal(lines string) bool {
	if s.j == nil {
		return false
	}
	_, err := s.tail(true)
	if errors.Is(err, errStale) {
		// Replaced since this process last read it (or a line could not
		// be read): the new journal is where the others read, and a
		// listing shows this change with the rest; without the line the
		// change would be one nobody described, which a process that
		// journals its own changes meanwhile takes in unlisted.
		if s.rebuild() != nil {
			return false
		}
		_, err = s.tail(true)
	}
	if err != nil {
		return false
	}
	defer func() { unlock(s.j) }()
	if s.joff > cmpOr(s.journalMax, journalMax) {
		if !s.replaceJournal() {
			return false
		}
	}
	if _, err := s.j.Write([]byte(lines)); err != nil {
		// A partial line would join the next one: end it, so that the
		// readers reject it and list the directory.
		_, _ = s.j.Write([]byte("\n"))
		return false
	}
	s.joff += int64(len(lines))
	return true
}

// replaceJournal ends the journal (locked by the caller) with "!" and
// puts an empty one in its place, locked in its stead.
func (s *Store) replaceJournal() bool {
	f, err := os.CreateTemp(s.Dir, ".tmp-journal-*")
	if err != nil {
		return false
	}
	tmp := f.Name()
	f.Close()
	// Reopened for appending and locked before it takes the name (nobody
	// else can know it yet): a second descriptor's flock would wait for
	// the first one's, in this process too.
	nf, err := os.OpenFile(tmp, os.O_RDWR|os.O_APPEND|openSafe, 0)
	if err != nil {
		os.Remove(tmp)
		return false
	}
	if lockJournal(nf, true, 1) != nil {
		nf.Close()
		os.Remove(tmp)
		return false
	}
	if _, err := s.j.Write([]byte("!\n")); err != nil {
		nf.Close()
		os.Remove(tmp)
		return false
	}
	if err := os.Rename(tmp, filepath.Join(s.Dir, journalName)); err != nil {
		nf.Close()
		os.Remove(tmp)
		return false
	}
	unlock(s.j)
	s.j.Close()
	s.j, s.joff = nf, 0
	if _, err := s.applyJournal(); err != nil {
		return false
	}
	return true
}
