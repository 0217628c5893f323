package mcpserver

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/herdr-link/herdr-link/link"
)

// Protocol revisions the server speaks; anything else is answered with
// the newest.
var revisions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

const latestRevision = "2025-11-25"

// Options configure a server.
type Options struct {
	// Link runs the operations. Nil means the environment gate failed:
	// the tool list is empty and every call answers NOT_IN_HERDR.
	Link *link.Link
	// Version is reported as serverInfo.version.
	Version string
	// Logger receives operator logs (stderr); nil discards them.
	Logger *slog.Logger
	// MaxLineBytes bounds an incoming line (DefaultMaxLineBytes when 0).
	MaxLineBytes int
	// Outside, when Link is nil, tells the user why the environment gate
	// failed and how to fix it (link.Gate.Advice): it is the initialize
	// result's instructions and the NOT_IN_HERDR detail of every call.
	Outside string
	// Bootstrap runs the self bootstrap in the background after
	// initialize, when Link is set.
	Bootstrap bool
	// ShutdownGrace bounds the wait for in-flight calls after the input
	// ends or ctx is cancelled (500 ms when 0).
	ShutdownGrace time.Duration

	// beforeHandle, when set (tests only), runs at the start of every
	// Handle.
	beforeHandle func(method string)
}

// Serve runs an MCP server on one connection (in, out) until in reaches
// EOF, a write to out fails, or ctx is cancelled. On EOF the requests
// already read are finished and answered, within ShutdownGrace; only then
// are the calls still running cancelled. When ctx is cancelled or out is
// broken, in-flight calls are cancelled at once. It returns once every
// goroutine it started has ended: the tool calls (which end with their
// context or the Link's call deadline), the start-up bootstrap, and the
// jsonrpc2 connection's read loop. When in is an io.Closer, Serve closes
// it to end that read (a pipe, a socket or a pollable file is interrupted
// by Close); another reader is waited for at most ShutdownGrace. Before
// it returns it waits for the Link's delivery locks still held in the
// background ([link.Link.Wait], at most the longest hold). It returns nil
// on an orderly end.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opt Options) error {
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	grace := opt.ShutdownGrace
	if grace <= 0 {
		grace = 500 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := newStream(in, out, opt.MaxLineBytes, log)
	st.onBroken = func(err error) {
		log.Info("mcp: output closed; ending the session", "err", err)
		cancel()
	}
	bootCtx, stopBoot := context.WithCancel(ctx)
	defer stopBoot()
	h := &handler{opt: opt, log: log, ctx: ctx, bootCtx: bootCtx, stream: st, workers: newWorkers()}
	// The connection outlives ctx: answers to the calls already read are
	// still written while they wind down. Serve closes it at the end.
	courierDone := startCourier(ctx, opt.Link, log)
	connCtx, closeConn := context.WithCancel(context.WithoutCancel(ctx))
	defer closeConn()
	conn := jsonrpc2.NewConn(connCtx, st, h, jsonrpc2.SetLogger(discardLogger{}))
	select {
	case <-st.ended:
		// Every request read so far has been handed to the handler (the
		// read loop waits in the stream). Finish them, bounded by the
		// grace; the start-up bootstrap is no request and stops now.
		log.Debug("mcp: input closed")
		stopBoot()
		h.closeIntake()
		if !h.calls.wait(ctx.Done(), grace) {
			if ctx.Err() == nil {
				log.Warn("mcp: in-flight calls did not finish within the shutdown grace; cancelling them", "grace", grace)
			}
			cancel()
			h.cancelAll()
		}
	case <-ctx.Done():
		log.Debug("mcp: stopping", "cause", context.Cause(ctx))
		h.cancelAll()
	}
	if !h.calls.wait(nil, grace) {
		log.Warn("mcp: in-flight calls did not stop within the shutdown grace; waiting for their deadlines")
		h.calls.wait(nil, -1)
	}
	h.workers.stop()
	st.shut()
	st.letEnd()
	_ = conn.Close()
	closeConn()
	if st.in != nil {
		<-st.readDone
	} else if !waitChan(st.readDone, grace) {
		log.Warn("mcp: the input cannot be closed; its read goroutine ends when the read returns")
	}
	cancel()
	<-courierDone
	waitHolds(opt.Link, log)
	return nil
}

// startCourier runs the Link's courier (its held messages) for the
// session; the channel is closed when it has stopped, after a delivery
// under way has finished.
func startCourier(ctx context.Context, l *link.Link, log *slog.Logger) <-chan struct{} {
	done := make(chan struct{})
	if l == nil || l.Config().Outbox == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		if err := l.Deliver(ctx); err != nil {
			log.Error("courier: held messages cannot be delivered by this process", "err", err)
		}
	}()
	return done
}

// waitChan waits for c to be closed, at most d.
func waitChan(c <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c:
		return true
	case <-t.C:
		return false
	}
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}
