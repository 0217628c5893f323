package mcpserver

import (
	"context"
	"log/slog"
	"time"

	"github.com/herdr-link/herdr-link/link"
)

// waitHolds keeps the server until l's delivery locks still held in the
// background (until Herdr's Enter is past) are released: they die with
// the process, and a sender stopped right after a send would let another
// one's text merge into its turn. The holds end by themselves; the bound
// is theirs.
func waitHolds(l *link.Link, log *slog.Logger) {
	if l == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.LongestHold()+100*time.Millisecond)
	defer cancel()
	if err := l.Wait(ctx); err != nil {
		log.Warn("mcp: delivery locks still held at exit", "err", err)
	}
}
