package link_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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
			}
		})
	}
}
