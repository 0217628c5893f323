package link_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link"
)

// BenchmarkSendExpectReply: sends to idle targets in turn with the
// courier running, as a request (the default) and with expect_reply
// false: what following a request costs the send, and the courier's
// share of it (the whole process is measured).
func BenchmarkSendExpectReply(b *testing.B) {
	for _, expect := range []bool{true, false} {
		b.Run(fmt.Sprintf("expect_reply=%v", expect), func(b *testing.B) {
			const targets = 16
			panes := []string{`{"id":"w1:p0","agent":{"kind":"claude","name":"brain","status":"idle","turn_ms":1,"submit_ms":1}}`}
			for i := range targets {
				panes = append(panes, fmt.Sprintf(`{"id":"w1:p%d","agent":{"kind":"claude","name":"t%d","status":"idle","turn_ms":2,"submit_ms":1}}`, i+1, i))
			}
			l, _ := benchLink(b, `{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[`+strings.Join(panes, ",")+`]}]}]}`, "w1:p0")
			l = relink(b, l, func(c *link.Config) { c.ReplyGrace = time.Hour })
			l.Config().Outbox.Spares = true // as a server's store
			ctx, cancel := context.WithCancel(b.Context())
			done := make(chan struct{})
			go func() { defer close(done); _ = l.Deliver(ctx) }()
			defer func() { cancel(); <-done }()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r, err := l.Send(ctx, link.SendRequest{To: fmt.Sprintf("t%d", i%targets), Message: "benchmark", When: link.WhenNow, ExpectReply: &expect})
				if err != nil {
					b.Fatal(r, err)
				}
				i++
				if i%pendingBound == 0 {
					b.StopTimer()
					endPending(b, l.Config().Outbox)
					b.StartTimer()
				}
			}
		})
	}
}

// pendingBound bounds the requests BenchmarkSendExpectReply keeps
// pending (their reply grace is an hour): every pendingBound sends, the
// pending ones are ended as replied and forgotten, off the clock, so the
// store never fills however long the benchmark runs.
const pendingBound = 64

func endPending(b *testing.B, st *outbox.Store) {
	b.Helper()
	ents, err := st.PendingRequests()
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range ents {
		r, _, err := st.EndRequest(e, outbox.OutcomeReplied, time.Now(), nil)
		if errors.Is(err, outbox.ErrBusy) || errors.Is(err, outbox.ErrNotFound) {
			continue // the courier is on it
		}
		if err != nil {
			b.Fatal(err)
		}
		if err := st.ForgetRequest(r); err != nil {
			b.Fatal(err)
		}
	}
}
