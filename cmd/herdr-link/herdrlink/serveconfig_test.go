package herdrlink

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/herdr-link/herdr-link/link"
)

// mustLink makes the Link of cfg or fails the test.
func mustLink(t testing.TB, cfg link.Config) *link.Link {
	t.Helper()
	l, err := link.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return l
}

// serve's duration flags: 0 and negative values are the flags' errors
// (settle-gap's 0 excepted), the upper bounds link.Config's, each told
// with the flag's name, its value and its rule.
func TestServeLinkConfig(t *testing.T) {
	valid := serveConfig{timeout: time.Second, delivery: link.DeliveryConfirm, submitHold: link.SubmitHold,
		settleGap: link.DefaultSettleGap, holdFor: time.Hour, replyGrace: time.Minute, requestTTL: time.Hour}
	tests := []struct {
		name string
		set  func(*serveConfig)
		want string
	}{
		{"defaults", func(*serveConfig) {}, ""},
		{"settle gap 0", func(c *serveConfig) { c.settleGap = 0 }, ""},
		{"timeout 0", func(c *serveConfig) { c.timeout = 0 }, "-timeout 0s: must be positive (for example 5s)"},
		{"timeout negative", func(c *serveConfig) { c.timeout = -time.Second }, "-timeout -1s: must be positive (for example 5s)"},
		{"reply grace 0", func(c *serveConfig) { c.replyGrace = 0 }, "-reply-grace 0s: must be positive"},
		{"request ttl negative", func(c *serveConfig) { c.requestTTL = -time.Minute }, "-request-ttl -1m0s: must be positive"},
		{"hold 0", func(c *serveConfig) { c.holdFor = 0 }, "-hold 0s: must be positive (for example 30m)"},
		{"submit hold 0", func(c *serveConfig) { c.submitHold = 0 }, "-submit-hold 0s: must be positive and at most 30s"},
		{"submit hold long", func(c *serveConfig) { c.submitHold = 31 * time.Second }, "-submit-hold 31s: must be positive and at most 30s"},
		{"settle gap negative", func(c *serveConfig) { c.settleGap = -time.Millisecond }, "-settle-gap -1ms: must be 0 or positive and at most 5s"},
		{"settle gap long", func(c *serveConfig) { c.settleGap = 6 * time.Second }, "-settle-gap 6s: must be 0 or positive and at most 5s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid
			tt.set(&c)
			_, got := c.linkConfig()
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// The flags' Config: settle-gap 0 trusts one reading (negative in the
// Config), the rest as given.
func TestServeLinkConfigValues(t *testing.T) {
	c := serveConfig{timeout: time.Second, delivery: link.DeliveryConfirm, submitHold: time.Second,
		holdFor: time.Hour, replyGrace: time.Minute, requestTTL: 2 * time.Hour, noNotices: true}
	cfg, msg := c.linkConfig()
	if msg != "" {
		t.Fatal(msg)
	}
	type flagged struct {
		NegativeSettleGap                                        bool
		CallTimeout, SubmitHold, HoldFor, ReplyGrace, RequestTTL time.Duration
		Delivery                                                 link.DeliveryMode
		NoNotices                                                bool
	}
	got := flagged{cfg.SettleGap < 0, cfg.CallTimeout, cfg.SubmitHold, cfg.HoldFor, cfg.ReplyGrace, cfg.RequestTTL, cfg.Delivery, cfg.NoNotices}
	want := flagged{true, time.Second, time.Second, time.Hour, time.Minute, 2 * time.Hour, link.DeliveryConfirm, true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config from the flags mismatch (-want +got):\n%s", diff)
	}
}
