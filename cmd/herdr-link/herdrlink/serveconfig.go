package herdrlink

import (
	"errors"
	"fmt"
	"time"

	"github.com/herdr-link/herdr-link/link"
)

// serveFlag ties a duration flag of serve to its link.Config field and
// the rule its message states.
type serveFlag struct {
	name, field string
	v           time.Duration
	rule        string
	// zeroOK: 0 is a value (settle-gap's one reading); any other flag
	// must be positive.
	zeroOK bool
}

// linkConfig is the link.Config of serve's flags (Herdr and the pane's
// own fields left to linkFromEnv), or the message of the first flag whose
// value is wrong. A flag's 0 is an error, not the Config's default; the
// bounds are link.Config.Validate's.
func (c *serveConfig) linkConfig() (link.Config, string) {
	settle := c.settleGap
	if settle == 0 {
		settle = -1 // one reading is trusted
	}
	cfg := link.Config{CallTimeout: c.timeout, Delivery: c.delivery, SubmitHold: c.submitHold,
		SettleGap: settle, HoldFor: c.holdFor, ReplyGrace: c.replyGrace, RequestTTL: c.requestTTL,
		NoNotices: c.noNotices}
	flags := []serveFlag{
		{"timeout", "CallTimeout", c.timeout, "must be positive (for example 5s)", false},
		{"reply-grace", "ReplyGrace", c.replyGrace, "must be positive", false},
		{"request-ttl", "RequestTTL", c.requestTTL, "must be positive", false},
		{"hold", "HoldFor", c.holdFor, "must be positive (for example 30m)", false},
		{"submit-hold", "SubmitHold", c.submitHold, fmt.Sprintf("must be positive and at most %v", link.MaxSubmitHold), false},
		{"settle-gap", "SettleGap", c.settleGap, fmt.Sprintf("must be 0 or positive and at most %v", link.MaxSettleGap), true},
	}
	for _, f := range flags {
		if f.v < 0 || (f.v == 0 && !f.zeroOK) {
			return cfg, fmt.Sprintf("-%s %v: %s", f.name, f.v, f.rule)
		}
	}
	err := cfg.Validate()
	var ce *link.ConfigError
	if errors.As(err, &ce) {
		for _, f := range flags {
			if f.field == ce.Field {
				return cfg, fmt.Sprintf("-%s %v: %s", f.name, f.v, f.rule)
			}
		}
	}
	if err != nil {
		return cfg, err.Error()
	}
	return cfg, ""
}
