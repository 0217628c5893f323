package start

import (
	"strconv"
	"time"

	"github.com/herdr-link/herdr-link/link/proto"
)

// The default bound on starts: at most DefaultLimit starts in any
// DefaultWindow, per server (one Launcher).
const (
	DefaultLimit  = 8
	DefaultWindow = time.Minute
)

// rate is a sliding-window count of starts: the times of the last few,
// oldest first. Its zero value is ready; Launcher.mu guards it.
type rate struct {
	at []time.Time
}

func (l *Launcher) limit() (int, time.Duration) {
	n, w := l.cfg.Limit, l.cfg.Window
	if n <= 0 {
		n = DefaultLimit
	}
	if w <= 0 {
		w = DefaultWindow
	}
	return n, w
}

// admit counts a start whose input passed its checks, before any
// call to Herdr, or refuses it when the window already holds the limit:
// every start counts, those that fail too (a failed start still opened
// and closed a pane, and a refused name is an answer too).
func (l *Launcher) admit(now time.Time) error {
	limit, window := l.limit()
	l.mu.Lock()
	defer l.mu.Unlock()
	at := l.starts.at
	for len(at) > 0 && !now.Before(at[0].Add(window)) {
		at = at[1:]
	}
	if len(at) >= limit {
		l.starts.at = at
		wait := at[0].Add(window).Sub(now)
		l.log().Warn("start refused: too many starts", "limit", limit, "window", window, "retry_in", wait)
		return newErr(proto.StartFailed, startLimitDetail(limit, window, wait), nil)
	}
	l.starts.at = append(at, now)
	return nil
}

// startLimitDetail is the text of a start refused by the bound.
func startLimitDetail(limit int, window, wait time.Duration) string {
	secs := int((wait + time.Second - 1) / time.Second)
	return "too many agents started: this agent may start at most " + strconv.Itoa(limit) + " in " + window.String() +
		"; nothing was created, try again in " + strconv.Itoa(max(secs, 1)) + " s"
}
