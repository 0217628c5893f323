package link_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

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

func TestConfigValidate(t *testing.T) {
	h := link.SocketHerdr{}
	tests := []struct {
		name string
		cfg  link.Config
		want string // the error, "" for none
	}{
		{"zero but Herdr", link.Config{Herdr: h}, ""},
		{"no pane", link.Config{Herdr: h, PaneID: ""}, ""},
		{"negative settle gap trusts one reading", link.Config{Herdr: h, SettleGap: -1}, ""},
		{"at the bounds", link.Config{Herdr: h, SubmitHold: link.MaxSubmitHold, SettleGap: link.MaxSettleGap}, ""},
		{"confirm", link.Config{Herdr: h, Delivery: link.DeliveryConfirm}, ""},
		{"negative retries", link.Config{Herdr: h, ReadinessRetries: -1}, "link config: ReadinessRetries -1: must not be negative"},
		{"negative start limit", link.Config{Herdr: h, StartLimit: -2}, "link config: StartLimit -2: must not be negative"},
		{"negative hold", link.Config{Herdr: h, HoldFor: -time.Second}, "link config: HoldFor -1s: must not be negative"},
		{"negative call timeout", link.Config{Herdr: h, CallTimeout: -time.Millisecond}, "link config: CallTimeout -1ms: must not be negative"},
		{"negative reply grace", link.Config{Herdr: h, ReplyGrace: -time.Minute}, "link config: ReplyGrace -1m0s: must not be negative"},
		{"negative request ttl", link.Config{Herdr: h, RequestTTL: -time.Minute}, "link config: RequestTTL -1m0s: must not be negative"},
		{"negative submit hold", link.Config{Herdr: h, SubmitHold: -time.Second}, "link config: SubmitHold -1s: must not be negative"},
		{"long submit hold", link.Config{Herdr: h, SubmitHold: time.Minute}, "link config: SubmitHold 1m0s: must be at most 30s"},
		{"long settle gap", link.Config{Herdr: h, SettleGap: 6 * time.Second}, "link config: SettleGap 6s: must be at most 5s"},
		{"unknown delivery", link.Config{Herdr: h, Delivery: 7}, "link config: Delivery 7: must be DeliveryFast or DeliveryConfirm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if _, nerr := link.New(tt.cfg); (nerr != nil) != (tt.want != "") {
				t.Errorf("New: got %v, want error %v", nerr, tt.want != "")
			}
			var ce *link.ConfigError
			if err != nil && !errors.As(err, &ce) {
				t.Errorf("got %T, want *link.ConfigError", err)
			}
		})
	}
}

func TestNewWantsHerdr(t *testing.T) {
	if err := (link.Config{PaneID: "w1:p1"}).Validate(); err != nil {
		t.Errorf("Validate: got %v, want nil (Herdr is New's)", err)
	}
	_, err := link.New(link.Config{PaneID: "w1:p1"})
	if got, want := fmt.Sprint(err), "link config: Herdr <nil>: must be set"; got != want {
		t.Errorf("New: got %q, want %q", got, want)
	}
}

func TestNewKeepsConfig(t *testing.T) {
	l := mustLink(t, link.Config{Herdr: link.SocketHerdr{}, PaneID: "w1:p1", HoldFor: time.Minute})
	if got := l.Config(); got.PaneID != "w1:p1" || got.HoldFor != time.Minute {
		t.Errorf("got PaneID %q HoldFor %v, want w1:p1 1m0s", got.PaneID, got.HoldFor)
	}
}

// relink makes a Link of l's Config changed by set, for a test that
// configures a Link its helper made (before it is used).
func relink(t testing.TB, l *link.Link, set func(*link.Config)) *link.Link {
	t.Helper()
	cfg := l.Config()
	set(&cfg)
	return mustLink(t, cfg)
}

// must returns l, or panics with err (for a helper without a testing.TB).
func must(l *link.Link, err error) *link.Link {
	if err != nil {
		panic(err)
	}
	return l
}
