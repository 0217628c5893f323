package herdrlink

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
)

// checkHeld: messages held for busy agents of this Herdr, and whether a
// herdr-link process is left to move them. A message whose accepting
// server exited is moved by any running herdr-link server, or by the
// plugin's hooks (herdr-link deliver); with neither it waits until one
// runs, or until it expires.
func (p *prober) checkHeld(context.Context) bool {
	start := time.Now()
	pl := &panelock.Locker{Scope: p.gate.Socket.Path, Roots: e2eLockRoots()}
	dir, err := pl.DirPath()
	if err != nil {
		p.add("held messages", warn, start, "no outbox: "+err.Error(), "messages to a busy agent cannot wait; the lock directory must be private to this user")
		return true
	}
	st, err := outbox.Open(dir, pl.ScopeID())
	if err != nil {
		p.add("held messages", warn, start, "no outbox: "+err.Error(), "")
		return true
	}
	held, orphans, servers, err := heldCounts(st)
	switch {
	case err != nil:
		p.add("held messages", warn, start, "the outbox cannot be read: "+err.Error(), "")
	case held == 0:
		p.add("held messages", pass, start, "none held", "")
	case orphans == 0:
		p.add("held messages", pass, start, fmt.Sprintf("%d held; the servers that accepted them run and will type them", held), "")
	case servers > 0:
		p.add("held messages", pass, start, fmt.Sprintf("%d held, %d of them by servers that exited; a running herdr-link server moves those", held, orphans), "")
	default:
		p.add("held messages", warn, start, fmt.Sprintf("%d held, %d of them waiting with no herdr-link server to move them (their senders' servers exited)", held, orphans),
			"install the Herdr plugin (its hooks type them when their target becomes ready), or run `herdr-link deliver -all` from a hook or timer of yours")
	}
	return true
}

// heldCounts counts the held messages of st, those whose accepting
// process is gone, and the herdr-link processes alive that serve st.
func heldCounts(st *outbox.Store) (held, orphans, servers int, err error) {
	ents, err := st.List()
	if err != nil {
		return 0, 0, 0, err
	}
	alive := map[string]bool{}
	for _, e := range ents {
		if !e.Held() {
			continue
		}
		held++
		ok, seen := alive[e.Owner]
		if !seen {
			ok = st.OwnerAlive(e.Owner)
			alive[e.Owner] = ok
		}
		if !ok {
			orphans++
		}
	}
	if orphans == 0 {
		return held, 0, 0, nil
	}
	files, err := os.ReadDir(st.Dir)
	if err != nil {
		return held, orphans, 0, err
	}
	for _, f := range files {
		if tok, ok := strings.CutPrefix(f.Name(), "owner."); ok && st.OwnerAlive(tok) {
			servers++
		}
	}
	return held, orphans, servers, nil
}
