package herdrlink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/herdr-link/herdr-link/internal/cliflag"
	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
	"github.com/herdr-link/herdr-link/socket"
)

const outboxUsage = `Lists the messages held for agents that could not take them yet (working,
blocked, a draft in the composer), and those that ended untyped within the
last ten minutes, in the outbox of this Herdr socket (HERDR_SOCKET_PATH, else the
socket of HERDR_SESSION or of the default session). The outbox is shared by
every herdr-link of this user serving that Herdr.

columns: ID, FROM → TO (agent names), STATE (held, typing, ended,
damaged), AGE (since it was accepted), EXPIRES IN (held only), BYTES (of
what is typed), END (why an ended message was not typed: expired, gone,
cancelled, maybe_delivered).

A damaged entry is a store file that cannot be a record (a link, not a
regular file, too large, not a record's JSON): it was set aside, is never
typed, and is listed with what its name shows (FROM → TO unknown, BYTES
its size) until it is removed or a day has passed.

'herdr-link outbox cancel ID...' (or --all) cancels held messages: each is
ended as cancelled, never typed, while holding its target's delivery lock
(so never while it is being typed). A message being typed is refused. A
damaged entry is removed.
Exit status: 0 done, 1 a message could not be listed or cancelled, 2 misuse.`

const outboxCancelUsage = `Cancels held messages of this Herdr socket's outbox (see 'herdr-link outbox
-h'): each one is ended as cancelled, and never typed. It waits for the
target's delivery lock first, so that it never races a delivery; a message
being typed is refused. Its sender sees it ended as cancelled.
Exit status: 0 every message cancelled, 1 one could not be, 2 misuse.`

// outboxConfig is what a test may change of the outbox verb.
type outboxConfig struct {
	getenv func(string) string
	now    func() time.Time
	// lockDir overrides the lock directory (tests); "" follows the
	// system's rule, as the server does.
	lockDir string
}

func outboxVerb(args []string, stdout, stderr io.Writer) int {
	return outboxConfig{getenv: os.Getenv, now: time.Now}.run(args, stdout, stderr)
}

func (c outboxConfig) run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "cancel" {
		return c.cancel(args[1:], stdout, stderr)
	}
	fs := cliflag.New("herdr-link outbox [flags]\n       herdr-link outbox cancel [flags] ID... | --all", outboxUsage, stderr)
	asJSON := fs.Bool("json", false, "print the messages as one JSON object (for scripts)")
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "herdr-link outbox: unexpected arguments %q (the only subcommand is cancel)\n", fs.Args())
		return 2
	}
	st, sock, err := c.open()
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link outbox:", err)
		return 1
	}
	rows, err := c.rows(st, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link outbox:", err)
		return 1
	}
	if *asJSON {
		return writeJSON(stdout, stderr, outboxReport{Socket: sock, Messages: rows})
	}
	printRows(stdout, rows, c.now())
	return 0
}

// open opens the outbox of this Herdr socket, as the server does, and
// returns it with the socket's path.
func (c outboxConfig) open() (*outbox.Store, string, error) {
	res, err := socket.ResolvePath(c.getenv)
	if err != nil {
		return nil, "", err
	}
	// The store is keyed by the socket's identity: without the socket
	// (Herdr not running), no server serves its outbox either.
	if _, err := os.Stat(res.Path); errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("no Herdr socket at %s (rule %s): is Herdr running?", res.Path, res.Rule)
	} else if err != nil {
		return nil, "", fmt.Errorf("the Herdr socket (rule %s): %w", res.Rule, err)
	}
	pl := c.locker(res.Path)
	dir, err := pl.DirPath()
	if err != nil {
		return nil, "", err
	}
	st, err := outbox.Open(dir, pl.ScopeID())
	if err != nil {
		return nil, "", err
	}
	return st, res.Path, nil
}

func (c outboxConfig) locker(sock string) *panelock.Locker {
	return &panelock.Locker{Scope: sock, Dir: c.lockDir, Roots: e2eLockRoots()}
}

// outboxReport is the --json output of the listing.
type outboxReport struct {
	Socket   string       `json:"socket"`
	Messages []outboxItem `json:"messages"`
}

// outboxItem is one message of the listing. It is for operators: the
// target's pane id may appear.
type outboxItem struct {
	ID     string `json:"id"`
	From   string `json:"from"`
	To     string `json:"to"`
	ToPane string `json:"to_pane"`
	State  string `json:"state"`
	// Why is why it was held (a state, a draft, a picker open).
	Why      string    `json:"why,omitempty"`
	Accepted time.Time `json:"accepted"`
	Expires  time.Time `json:"expires"`
	// Bytes is the size of the text to type (0 once ended: an ended
	// record keeps no text).
	Bytes int       `json:"bytes"`
	End   string    `json:"end,omitempty"`
	Ended time.Time `json:"ended,omitzero"`
	// OwnerAlive: the process that accepted it still runs (when false,
	// any herdr-link serving this Herdr delivers it).
	OwnerAlive bool `json:"owner_alive"`
}

func stateName(s byte) string {
	switch s {
	case outbox.StatePending:
		return "request"
	case outbox.StateAnswered:
		return "request ended"
	case outbox.StateHeld:
		return "held"
	case outbox.StateTyping:
		return "typing"
	case outbox.StateEnded:
		return "ended"
	}
	return string(s)
}

// rows reads every message of st, in acceptance order, then the damaged
// entries; a message that went away while it was read (typed, say) is
// left out, and one found damaged is listed as such.
func (c outboxConfig) rows(st *outbox.Store, stderr io.Writer) ([]outboxItem, error) {
	ents, err := st.List()
	if err != nil {
		return nil, err
	}
	rows := []outboxItem{}
	alive := map[string]bool{}
	for _, e := range ents {
		if e.IsRequest() {
			// A request's record: its message is listed by its own entry;
			// reading it sets it aside if it is damaged.
			if _, err := st.Request(e); errors.Is(err, outbox.ErrDamaged) {
				fmt.Fprintln(stderr, "herdr-link outbox:", err)
			}
			continue
		}
		m, err := st.Read(e)
		if errors.Is(err, outbox.ErrNotFound) {
			continue
		}
		if errors.Is(err, outbox.ErrDamaged) {
			fmt.Fprintln(stderr, "herdr-link outbox:", err)
			continue
		}
		if err != nil {
			return nil, err
		}
		ok, seen := alive[e.Owner]
		if !seen {
			ok = st.OwnerAlive(e.Owner)
			alive[e.Owner] = ok
		}
		rows = append(rows, outboxItem{ID: m.ID, From: m.From, To: m.To, ToPane: m.PaneID, State: stateName(e.State), Why: m.Reason,
			Accepted: m.Accepted.UTC(), Expires: m.Expires.UTC(), Bytes: len(m.Text), End: m.End, Ended: m.Ended.UTC(), OwnerAlive: ok})
	}
	damaged, err := st.Damaged()
	if err != nil {
		return nil, err
	}
	for _, d := range damaged {
		rows = append(rows, outboxItem{ID: d.ID, From: "?", To: "?", State: stateDamaged, Accepted: d.Accepted.UTC(),
			Bytes: int(min(d.Size, 1<<40)), End: "damaged (was " + stateName(d.State) + ")"})
	}
	return rows, nil
}

// stateDamaged is the listing's state of a damaged entry.
const stateDamaged = "damaged"

func printRows(w io.Writer, rows []outboxItem, now time.Time) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no held messages")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tFROM → TO\tSTATE\tWHY\tAGE\tEXPIRES IN\tBYTES\tEND")
	for _, r := range rows {
		exp, bytes := "-", "-"
		if r.State == stateDamaged {
			bytes = fmt.Sprint(r.Bytes)
		}
		if r.State != "ended" && r.State != stateDamaged {
			exp, bytes = "expired", fmt.Sprint(r.Bytes)
			if d := r.Expires.Sub(now); d > 0 {
				exp = shortDuration(d)
			}
		}
		end, why := r.End, r.Why
		if end == "" {
			end = "-"
		}
		if why == "" {
			why = "-"
		}
		fmt.Fprintf(tw, "%s\t%s → %s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.From, r.To, r.State, why, shortDuration(now.Sub(r.Accepted)), exp, bytes, end)
	}
	tw.Flush()
}

// shortDuration writes d to the second for an operator: 45s, 4m05s,
// 2h03m.
func shortDuration(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// Bounds of a cancel's wait for a target's delivery lock.
const (
	// defaultCancelWait: a delivery under way keeps the lock until its
	// submission is seen (at most 30 s for the largest message).
	defaultCancelWait = 35 * time.Second
	// cancelLease is how long a cancel holds the lock at most.
	cancelLease = 5 * time.Second
)

// cancelOutcome is what a cancel did to one message (--json).
type cancelOutcome struct {
	ID     string `json:"id"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	Result string `json:"result"` // cancelled, removed (a damaged entry), or refused
	Reason string `json:"reason,omitempty"`
}

func (c outboxConfig) cancel(args []string, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-link outbox cancel [flags] ID... | --all", outboxCancelUsage, stderr)
	all := fs.Bool("all", false, "cancel every held message of this Herdr")
	asJSON := fs.Bool("json", false, "print what was done as one JSON object (for scripts)")
	wait := fs.Duration("wait", defaultCancelWait, "how long to wait for a target's delivery lock (a delivery under way keeps it)")
	if code, done := cliflag.Parse(fs, flagsFirst(fs, args), stdout); done {
		return code
	}
	switch {
	case *all && fs.NArg() > 0:
		fmt.Fprintln(stderr, "herdr-link outbox cancel: give IDs or --all, not both")
		return 2
	case !*all && fs.NArg() == 0:
		fmt.Fprintln(stderr, "herdr-link outbox cancel: name the messages to cancel (their IDs, see 'herdr-link outbox'), or --all")
		fs.Usage()
		return 2
	case *wait <= 0:
		fmt.Fprintf(stderr, "herdr-link outbox cancel: -wait %v: must be positive\n", *wait)
		return 2
	}
	st, sock, err := c.open()
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link outbox cancel:", err)
		return 1
	}
	ids := fs.Args()
	if *all {
		ents, err := st.List()
		if err != nil {
			fmt.Fprintln(stderr, "herdr-link outbox cancel:", err)
			return 1
		}
		for _, e := range ents {
			if e.State == outbox.StateHeld {
				ids = append(ids, e.ID)
			}
		}
		if ids, err = withDamaged(st, ids); err != nil {
			fmt.Fprintln(stderr, "herdr-link outbox cancel:", err)
			return 1
		}
	}
	pl := c.locker(sock)
	outcomes := []cancelOutcome{}
	code := 0
	for _, id := range ids {
		o := removeDamaged(st, c.cancelOne(st, pl, id, *wait))
		if o.Result == "refused" && !(*all && o.Reason == reasonGone) {
			code = 1
		}
		outcomes = append(outcomes, o)
	}
	if *asJSON {
		if writeJSON(stdout, stderr, struct {
			Socket   string          `json:"socket"`
			Messages []cancelOutcome `json:"messages"`
		}{sock, outcomes}) != 0 {
			return 1
		}
		return code
	}
	if len(ids) == 0 {
		fmt.Fprintln(stdout, "nothing to cancel: no held messages")
	}
	for _, o := range outcomes {
		if o.Result == "cancelled" {
			fmt.Fprintf(stdout, "cancelled %s (%s → %s)\n", o.ID, o.From, o.To)
			continue
		}
		if o.Result == resultRemoved {
			fmt.Fprintf(stdout, "removed %s (damaged)\n", o.ID)
			continue
		}
		fmt.Fprintf(stderr, "herdr-link outbox cancel: %s: %s\n", o.ID, o.Reason)
	}
	return code
}

// withDamaged adds to ids those of the damaged entries of st.
func withDamaged(st *outbox.Store, ids []string) ([]string, error) {
	damaged, err := st.Damaged()
	if err != nil {
		return nil, err
	}
	for _, d := range damaged {
		if !slices.Contains(ids, d.ID) {
			ids = append(ids, d.ID)
		}
	}
	return ids, nil
}

// removeDamaged removes the damaged entries of o's message: when no held
// message of that id was found, they are what the operator named (and
// nothing can type them); after a cancel, leftovers of the same id.
func removeDamaged(st *outbox.Store, o cancelOutcome) cancelOutcome {
	switch {
	case o.Result == "refused" && o.Reason == reasonGone:
		if n, err := st.RemoveDamaged(o.ID); err != nil {
			o.Reason = err.Error()
		} else if n > 0 {
			o = cancelOutcome{ID: o.ID, Result: resultRemoved}
		}
	case o.Result == "cancelled":
		_, _ = st.RemoveDamaged(o.ID)
	}
	return o
}

// resultRemoved: a damaged entry was removed.
const resultRemoved = "removed"

// Why a cancel did not cancel.
const (
	reasonGone   = "no such held message (delivered, or not held for this Herdr)"
	reasonTyping = "being typed now: it cannot be cancelled"
	// reasonClaimed: a typer claimed it and is gone (its lock is free);
	// the next delivery to its target ends it as maybe_delivered.
	reasonClaimed = "claimed by a delivery that did not finish (it may have been typed): not cancelled"
	reasonBusy    = "its target's delivery lock stayed taken (a delivery is under way); try again"
)

// cancelOne ends held message id as cancelled, holding its target's
// delivery lock: no typer can claim it meanwhile, and one that claimed it
// before has it in state typing, which is refused.
func (c outboxConfig) cancelOne(st *outbox.Store, pl *panelock.Locker, id string, wait time.Duration) cancelOutcome {
	o := cancelOutcome{ID: id, Result: "refused"}
	m, reason := heldMessage(st, id)
	if reason != "" {
		o.Reason = reason
		return o
	}
	o.From, o.To = m.From, m.To
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	lease, err := pl.Lock(ctx, m.TargetKey, cancelLease)
	switch {
	case err != nil && ctx.Err() != nil:
		o.Reason = reasonBusy
		return o
	case err != nil:
		o.Reason = "no delivery lock: " + err.Error()
		return o
	}
	defer lease.Unlock()
	// Under the lock: what it is now (typed, claimed or ended meanwhile?).
	if m, reason = heldMessage(st, id); reason != "" {
		if reason == reasonTyping {
			reason = reasonClaimed
		}
		o.Reason = reason
		return o
	}
	if err := st.End(m, outbox.EndCancelled, c.now()); err != nil {
		o.Reason = err.Error()
		return o
	}
	o.Result = "cancelled"
	return o
}

// heldMessage reads message id if it is held, else says why not.
func heldMessage(st *outbox.Store, id string) (outbox.Message, string) {
	e, err := st.Find(id)
	if errors.Is(err, outbox.ErrNotFound) {
		return outbox.Message{}, reasonGone
	}
	if err != nil {
		return outbox.Message{}, err.Error()
	}
	switch e.State {
	case outbox.StateTyping:
		return outbox.Message{}, reasonTyping
	case outbox.StateEnded:
		m, err := st.Read(e)
		if err != nil {
			return outbox.Message{}, "already ended"
		}
		return outbox.Message{}, "already ended (" + m.End + ")"
	}
	m, err := st.Read(e)
	if errors.Is(err, outbox.ErrNotFound) || errors.Is(err, outbox.ErrDamaged) {
		return outbox.Message{}, reasonGone // a damaged one is removed by the caller
	}
	if err != nil {
		return outbox.Message{}, err.Error()
	}
	return m, ""
}

func writeJSON(stdout, stderr io.Writer, v any) int {
	b, err := jsonx.MarshalIndent(v)
	if err != nil {
		fmt.Fprintln(stderr, "herdr-link outbox:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return 0
}
