package link

import (
	"context"

	"github.com/herdr-link/herdr-link/link/proto"
	"github.com/herdr-link/herdr-link/link/start"
)

// The placements of a started agent.
const (
	PlaceRight = start.PlaceRight // a split to the right of the anchor (the default)
	PlaceDown  = start.PlaceDown  // a split below the anchor
	PlaceTab   = start.PlaceTab   // a new tab of the caller's workspace
)

// Bounds of a start's args.
const (
	MaxStartArgs     = start.MaxArgs
	MaxStartArgBytes = start.MaxArgBytes
	MaxStartArgsSum  = start.MaxArgsSum
)

// DefaultStartTimeout bounds the wait for a started agent to become ready
// when Config.StartTimeout is zero (Herdr's own default for agent.start).
const DefaultStartTimeout = start.DefaultTimeout

// The default bound on starts: at most DefaultStartLimit starts in any
// DefaultStartWindow, per server (one Link).
const (
	DefaultStartLimit  = start.DefaultLimit
	DefaultStartWindow = start.DefaultWindow
)

// ConfigPath is where a configured agent is looked up, relative to the
// caller's working directory and each of its parents.
const ConfigPath = start.ConfigPath

// ConfiguredAgent is one entry of agent_config.json's "agents" object
// ([start.ConfiguredAgent] says its format).
type ConfiguredAgent = start.ConfiguredAgent

// Starter is the part of Herdr's control plane that creates panes and
// starts agents in them; [SocketHerdr] implements it.
type Starter = start.Starter

// PaneRecord is a pane as pane.list shows it: where it is and whether an
// agent runs in it.
type PaneRecord = start.PaneRecord

// StartRequest is what a model asks Start to do. Exactly one of Kind and
// Agent is set; Args only with Kind.
type StartRequest = start.Request

// StartResult is what Start returns: the new agent's name and state, and
// when a first message was given, its id and delivery as Send reports them.
type StartResult = start.Result

// The codes of a failed start. Those of its input and configuration are
// raised before anything is created.
const (
	// StartInputInvalid: a start argument is malformed (name, kind or
	// agent, args, placement, cwd), or Herdr refused the kind or args.
	StartInputInvalid = proto.StartInputInvalid
	// StartConfigNotFound: no .agents/agent_config.json from the working
	// directory up.
	StartConfigNotFound = proto.StartConfigNotFound
	// StartConfigInvalid: the agent_config.json found cannot be used.
	StartConfigInvalid = proto.StartConfigInvalid
	// StartAgentNotFound: the configuration has no agent of that key.
	StartAgentNotFound = proto.StartAgentNotFound
	// StartNameTaken: an agent of that name already exists.
	StartNameTaken = proto.StartNameTaken
	// StartFailed: Herdr did not start the agent, or it did not become
	// ready, or its first message failed; what this start created was
	// closed again.
	StartFailed = proto.StartFailed
)

// Sentinels for errors.Is.
var (
	ErrStartInputInvalid   = proto.ErrStartInputInvalid
	ErrStartConfigNotFound = proto.ErrStartConfigNotFound
	ErrStartConfigInvalid  = proto.ErrStartConfigInvalid
	ErrStartAgentNotFound  = proto.ErrStartAgentNotFound
	ErrStartNameTaken      = proto.ErrStartNameTaken
	ErrStartFailed         = proto.ErrStartFailed
)

// Start starts a named agent in the caller's workspace: it creates a pane
// (a split beside the caller or the peer named Beside, or a new tab),
// runs agent.start in it, waits until Herdr reports the agent ready, and
// delivers Message through [Link.Send] when given. Every input is checked
// before anything is created; a failure after the pane was created closes
// that pane (and with it a tab this call created), nothing else.
func (l *Link) Start(ctx context.Context, req StartRequest) (StartResult, error) {
	return l.starts.Start(ctx, req)
}

// newLauncher is the start of agents of l, made of l's Config; what it
// needs of the protocol (the caller's resolution, the send, the errors of
// Herdr calls) comes from l.
func newLauncher(l *Link) *start.Launcher {
	return start.New(start.Config{
		Herdr: l.cfg.Herdr, Ports: startPorts{l}, Logger: l.log(), Dir: l.cfg.Dir, Home: l.cfg.Home,
		Timeout: l.cfg.StartTimeout, Poll: l.cfg.StartPoll, Limit: l.cfg.StartLimit, Window: l.cfg.StartWindow,
		CallTimeout: l.callTimeout(),
	})
}

// startPorts is what link supplies to the start of agents.
type startPorts struct{ l *Link }

func (p startPorts) Place(ctx context.Context, name, beside string) (start.Place, error) {
	s, _, err := p.l.named(ctx)
	if err != nil {
		return start.Place{}, err
	}
	out := start.Place{Anchor: s.pane, Workspace: s.ws}
	for _, a := range s.agents {
		if a.Name == name && s.inWorkspace(a) {
			out.Taken = true
			return out, nil
		}
	}
	if beside != "" {
		a, ok := s.peer(beside, "")
		if !ok {
			return start.Place{}, newErr(PeerNotFound, detailPeer, nil)
		}
		out.Anchor = a.PaneID
	}
	return out, nil
}

func (p startPorts) Send(ctx context.Context, to, message string) (string, string, error) {
	sent, err := p.l.Send(ctx, SendRequest{To: to, Message: message})
	return sent.ID, sent.Delivery, err
}

func (p startPorts) Undeliverable(message string) error {
	if CheckMessage(message) != nil || CheckDeliverable(message, "") != nil {
		return newErr(InvalidArgument, detailTooBig, nil)
	}
	return nil
}

func (p startPorts) NoStarter() error { return newErr(NotInHerdr, detailNoMethod, nil) }

func (p startPorts) HerdrFailed(method string, err error) error {
	if e := p.l.herdrError(opLookup, method, err); e != nil {
		return e
	}
	return nil
}

func (p startPorts) Refusal(err error) bool { return isRefusal(err) }

func (p startPorts) Ended(ctx context.Context) error { return ctxErr(ctx) }
