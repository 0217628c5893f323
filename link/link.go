package link

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/herdr-link/herdr-link/link/courier"
	"github.com/herdr-link/herdr-link/link/deliver"
	"github.com/herdr-link/herdr-link/link/start"
	"github.com/herdr-link/herdr-link/socket"
)

// Link runs herdr-link/1 operations for the agent in one pane. Self and
// targets are resolved from Herdr on every call; nothing about them is
// cached. A Link is made by [New] from a [Config] it keeps unchanged, and
// is safe for concurrent use.
type Link struct {
	cfg Config

	mu       sync.Mutex
	inflight *bootCall

	// d is the delivery core: one delivery to one target, and the count
	// of what deliveries leave in the background (for Wait).
	d *deliver.Deliverer
	// starts starts agents (Start), with its bound on how many.
	starts *start.Launcher
	// c is the courier: the held messages, the request ledger and its
	// watch, and the wait for a reply.
	c *courier.Courier
}

// Config returns the Config the Link was made of.
func (l *Link) Config() Config { return l.cfg }

type bootCall struct {
	done chan struct{}
	name string
	err  error
}

// DefaultCallTimeout is [Config.CallTimeout] when zero.
const DefaultCallTimeout = socket.DefaultTimeout

func (l *Link) callTimeout() time.Duration {
	if l.cfg.CallTimeout > 0 {
		return l.cfg.CallTimeout
	}
	return DefaultCallTimeout
}

// bound gives ctx the operation deadline (an earlier deadline of ctx
// stays).
func (l *Link) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, l.callTimeout())
}

func (l *Link) log() *slog.Logger {
	if l.cfg.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.cfg.Logger
}

// Peer is an agent as a model sees it: a name and an advisory state.
type Peer struct {
	Name  string `json:"name"`
	State string `json:"state"`
	// Held counts the caller's messages held for this peer (left out
	// when none).
	Held int `json:"held,omitempty"`
	// AwaitingReply lists the ids of the caller's requests to this peer
	// that have no outcome yet (left out when none).
	AwaitingReply []string `json:"awaiting_reply,omitempty"`
}

// PeersResult is what Peers returns.
type PeersResult struct {
	Self  Peer   `json:"self"`
	Peers []Peer `json:"peers"`
}

// SendResult is what Send returns. Status is always "sent" (Herdr
// accepted the prompt); Delivery says what followed: DeliverySubmitted,
// DeliveryQueued, DeliveryInterrupting or DeliveryUnconfirmed.
type SendResult struct {
	Status   string `json:"status"`
	ID       string `json:"id"`
	To       string `json:"to"`
	Delivery string `json:"delivery"`
}

// CloseResult is what Close returns.
type CloseResult struct {
	Status string `json:"status"`
	Agent  string `json:"agent"`
}

// State maps a Herdr status to the herdr-link state vocabulary:
// idle, working, blocked, done or unknown (for anything else).
func State[S ~string](s S) string { return deliver.State(s) }
