package link

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/herdr-link/herdr-link/socket"
)

// Capabilities is what herdr-link does differently by the Herdr release it
// talks to, derived from ping's version ([CapabilitiesFor]).
type Capabilities struct {
	// Version is ping's version ("" when unknown).
	Version string
	// PromptAfterEnter: agent.prompt answers only after the text and
	// Herdr's delayed Enter were written to the pane (Herdr 0.9.0 on), so
	// a delivery needs no lock hold after the answer, and the target's
	// turn may have started before the answer arrived.
	PromptAfterEnter bool
	// LiveEvents: a new events.subscribe stream starts with live events
	// and never replays history (Herdr 0.9.0 on): subscribe before taking
	// the snapshot the stream is to follow.
	LiveEvents bool
}

// Herdr releases whose behaviour herdr-link knows.
var (
	herdr082 = Capabilities{}
	herdr09  = Capabilities{PromptAfterEnter: true, LiveEvents: true}
)

// CapabilitiesFor is the behaviour of Herdr version v: 0.8.x and older
// behave as 0.8.2; 0.9.0 and every later version (a release herdr-link
// does not know yet included) as the newest known, 0.9.x. A version that
// does not parse gets 0.8.2's behaviour, the one that claims least.
func CapabilitiesFor(v string) Capabilities {
	c := herdr082
	if major, minor, ok := majorMinor(v); ok && (major > 0 || minor >= 9) {
		c = herdr09
	}
	c.Version = v
	return c
}

func majorMinor(v string) (major, minor int, ok bool) {
	core, _, _ := strings.Cut(v, "-")
	parts := strings.Split(core, ".")
	if len(parts) < 2 {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(parts[1])
	return a, b, err1 == nil && err2 == nil && a >= 0 && b >= 0
}

// ServerInfoer is implemented by a [Herdr] that knows the server's
// version (SocketHerdr: the protocol ping every socket client makes once).
type ServerInfoer interface {
	HerdrVersion(ctx context.Context) (string, error)
}

// Herdr 0.9 failures of agent.prompt, by message.
const (
	// msgActorClosed: the pane's terminal went away while the submission
	// was pending; its text may have been typed.
	msgActorClosed = "pty actor closed"
	// detailClosedDuring is the send failure of such a submission.
	detailClosedDuring = "the target's terminal closed while Herdr was typing the message: it may have been delivered; do not resend blindly"
)

// HerdrVersion is ping's version, from the socket client's one protocol
// ping (cached per client). A client that must not ping on its caller's
// behalf (ProtocolOff) reports none: 0.8.2's behaviour, which claims least.
func (h SocketHerdr) HerdrVersion(ctx context.Context) (string, error) {
	if h.Client.Protocol == socket.ProtocolOff {
		return "", errors.New("link: the socket client does not ping (ProtocolOff)")
	}
	p, err := h.Client.ServerInfo(ctx)
	return p.Version, err
}

// closedDuringSubmission reports Herdr 0.9's agent_prompt_failed for a
// submission whose terminal went away while it was pending.
func closedDuringSubmission(err error) bool {
	var se *socket.Error
	return errors.As(err, &se) && se.Code == "agent_prompt_failed" && se.Message == msgActorClosed
}
