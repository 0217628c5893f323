package link

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/socket"
)

// socketKinds is every error kind the socket package declares, by name.
// TestErrorTableCoversSocket reads socket's source: a new kind there
// fails it until it is added here with its mapping.
var socketKinds = map[string]error{
	"ErrUnavailable": socket.ErrUnavailable, "ErrTimeout": socket.ErrTimeout, "ErrEmptyResponse": socket.ErrEmptyResponse,
	"ErrTruncatedResponse": socket.ErrTruncatedResponse, "ErrResponseTooLarge": socket.ErrResponseTooLarge,
	"ErrMalformedResponse": socket.ErrMalformedResponse, "ErrConnection": socket.ErrConnection, "ErrProtocol": socket.ErrProtocol,
	"ErrProtocolMismatch": socket.ErrProtocolMismatch, "ErrMethodUnsupported": socket.ErrMethodUnsupported, "ErrClosed": socket.ErrClosed, "ErrEventsLost": socket.ErrEventsLost,
	"ErrPlatform":   socket.ErrPlatform,
	"ErrAfterWrite": socket.ErrAfterWrite, "ErrRequestTooLarge": socket.ErrRequestTooLarge,
	"ErrInvalidRequest": socket.ErrInvalidRequest, "ErrAgentNotFound": socket.ErrAgentNotFound,
	"ErrAgentTargetAmbiguous": socket.ErrAgentTargetAmbiguous, "ErrAgentBlocked": socket.ErrAgentBlocked,
	"ErrAgentNotReady": socket.ErrAgentNotReady, "ErrEmptyAgentPrompt": socket.ErrEmptyAgentPrompt,
	"ErrAgentPromptFailed": socket.ErrAgentPromptFailed, "ErrAgentNameTaken": socket.ErrAgentNameTaken,
	"ErrInvalidAgentName": socket.ErrInvalidAgentName, "ErrAgentLaunchPending": socket.ErrAgentLaunchPending,
	"ErrPaneNotFound": socket.ErrPaneNotFound, "ErrWorkspaceNotFound": socket.ErrWorkspaceNotFound,
	"ErrServerUnavailable": socket.ErrServerUnavailable,
	// agent.start's refusals: a start classifies them itself (startError).
	"ErrUnsupportedAgentKind": socket.ErrUnsupportedAgentKind, "ErrInvalidAgentArgument": socket.ErrInvalidAgentArgument,
	"ErrInvalidAgentTimeout": socket.ErrInvalidAgentTimeout, "ErrAgentPaneNotFound": socket.ErrAgentPaneNotFound,
	"ErrAgentPaneBusy": socket.ErrAgentPaneBusy, "ErrAgentPaneUnavailable": socket.ErrAgentPaneUnavailable,
	"ErrAgentStartInput": socket.ErrAgentStartInput,
}

// declaredSocketErrors lists the package-level Err* variables of socket's
// non-test files.
func declaredSocketErrors(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../socket/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("socket sources: %v %v", files, err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if strings.HasPrefix(n.Name, "Err") {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

// A socket error as a call returns it.
func asReturned(kind error) error {
	var se *socket.Error
	switch {
	case errors.As(kind, &se):
		return &socket.Error{Method: "agent.prompt", Code: se.Code, Message: "Herdr's text"}
	case kind == socket.ErrAfterWrite:
		return socket.AfterWrite(errors.New("socket: read: connection reset"))
	}
	return fmt.Errorf("socket: agent.prompt: %w", kind)
}

// TestErrorTableCoversSocket: every error kind the socket package declares
// maps, in every operation, to the link error given here, through a row
// of the table (never the catch-all for unknown errors).
func TestErrorTableCoversSocket(t *testing.T) {
	var known []string
	for n := range socketKinds {
		known = append(known, n)
	}
	sort.Strings(known)
	if got := declaredSocketErrors(t); strings.Join(got, ",") != strings.Join(known, ",") {
		t.Fatalf("socket declares %v\nthe table test knows %v\nadd the new kind to socketKinds, errorTable and the cases below", got, known)
	}
	type want struct {
		code   Code
		detail string
	}
	var (
		unreachable = want{NotInHerdr, detailUnreachable}
		badReply    = want{NotInHerdr, detailBadReply}
	)
	// The refusal fallbacks, by operation.
	fallback := map[operation]want{
		opLookup: {NotInHerdr, detailRefusedCall}, opSelfPane: {NotInHerdr, detailRefusedCall}, opName: {SelfUnnamed, detailUnnamed},
		opSend: {SendFailed, detailRefused}, opClose: {CloseFailed, detailClose},
	}
	every := func(w want) map[operation]want {
		return map[operation]want{opLookup: w, opSelfPane: w, opName: w, opSend: w, opClose: w}
	}
	with := func(base map[operation]want, op operation, w want) map[operation]want {
		m := map[operation]want{}
		for k, v := range base {
			m[k] = v
		}
		m[op] = w
		return m
	}
	cases := map[string]map[operation]want{
		"ErrUnavailable": every(unreachable), "ErrTimeout": every(unreachable), "ErrEmptyResponse": every(unreachable),
		"ErrConnection": every(unreachable), "ErrClosed": every(unreachable), "ErrPlatform": every(unreachable),
		"ErrTruncatedResponse": every(badReply), "ErrResponseTooLarge": every(badReply), "ErrMalformedResponse": every(badReply), "ErrProtocol": every(badReply),
		"ErrProtocolMismatch":  every(want{NotInHerdr, detailProtocol}),
		"ErrMethodUnsupported": every(want{NotInHerdr, detailNoMethod}),
		"ErrAfterWrite": with(with(every(unreachable), opSend, want{SendFailed, detailMaybeSent}),
			opClose, want{CloseFailed, detailMaybeClosed}),
		"ErrRequestTooLarge":      fallback,
		"ErrEventsLost":           fallback, // a stream's end, never a call's answer
		"ErrInvalidRequest":       fallback,
		"ErrAgentNotFound":        with(fallback, opSend, want{PeerNotFound, detailPeer}),
		"ErrAgentTargetAmbiguous": fallback,
		"ErrAgentBlocked":         with(fallback, opSend, want{SendFailed, detailBlocked}),
		"ErrAgentNotReady":        with(fallback, opSend, want{SendFailed, detailNotReady}),
		"ErrEmptyAgentPrompt":     fallback, "ErrAgentPromptFailed": fallback, "ErrAgentNameTaken": fallback,
		"ErrInvalidAgentName": fallback, "ErrAgentLaunchPending": fallback,
		"ErrPaneNotFound":      with(with(fallback, opSelfPane, want{NotInHerdr, detailNoPane}), opClose, want{PeerNotFound, detailPeer}),
		"ErrWorkspaceNotFound": fallback, "ErrServerUnavailable": fallback,
		"ErrUnsupportedAgentKind": fallback, "ErrInvalidAgentArgument": fallback, "ErrInvalidAgentTimeout": fallback,
		"ErrAgentPaneNotFound": fallback, "ErrAgentPaneBusy": fallback, "ErrAgentPaneUnavailable": fallback, "ErrAgentStartInput": fallback,
	}
	for _, name := range known {
		byOp, ok := cases[name]
		if !ok {
			t.Errorf("%s: no expected mapping", name)
			continue
		}
		err := asReturned(socketKinds[name])
		for op := opLookup; op <= opClose; op++ {
			w := byOp[op]
			got, _ := classify(op, err)
			if got.Code != w.code || got.Detail != w.detail || !errors.Is(got, err) {
				t.Errorf("%s in op %d: %s, want %s: %s", name, op, got, w.code, w.detail)
			}
			if !explicit(op, err) {
				t.Errorf("%s in op %d: mapped by the catch-all, not a row of the table", name, op)
			}
		}
	}
}

// TestErrorTableEdges: a row with a condition, and what no row matches.
func TestErrorTableEdges(t *testing.T) {
	// Herdr 0.9's agent_prompt_failed for a pane closed during the
	// submission has its own detail in a send (a row with a condition).
	closed := &socket.Error{Method: "agent.prompt", Code: "agent_prompt_failed", Message: msgActorClosed}
	if got, _ := classify(opSend, closed); got.Code != SendFailed || got.Detail != detailClosedDuring {
		t.Errorf("closed during submission: %v", got)
	}
	if got, _ := classify(opClose, closed); got.Detail != detailClose {
		t.Errorf("closed during submission, in a close: %v", got)
	}
	// A failure that is not the socket's (a fake's) is NOT_IN_HERDR, and
	// cancellation says so.
	if got, _ := classify(opSend, errors.New("boom")); got.Code != NotInHerdr || got.Detail != detailUnreachable {
		t.Errorf("a foreign error: %v", got)
	}
	// A cancelled call is no one's failure to reach Herdr: a send or a
	// close says that nothing happened, in its own code.
	cancelled := fmt.Errorf("x: %w", context.Canceled)
	for _, c := range []struct {
		op     operation
		code   Code
		detail string
	}{
		{opLookup, NotInHerdr, detailCancelled},
		{opName, NotInHerdr, detailCancelled},
		{opSend, SendFailed, detailCancelledSend},
		{opClose, CloseFailed, detailCancelledClose},
	} {
		got, _ := classify(c.op, cancelled)
		if got.Code != c.code || got.Detail != c.detail {
			t.Errorf("cancelled in op %d: got %v, want %s: %s", c.op, got, c.code, c.detail)
		}
	}
	// Cancelled once the prompt was written: it may have been delivered.
	if got, _ := classify(opSend, socket.AfterWrite(cancelled)); got.Code != SendFailed || got.Detail != detailMaybeSent {
		t.Errorf("cancelled after the write: got %v, want %s: %s", got, SendFailed, detailMaybeSent)
	}
}

// explicit reports whether a row of errorTable matches err in op.
func explicit(op operation, err error) bool {
	for _, r := range errorTable {
		if r.matches(op, err) {
			return true
		}
	}
	return false
}

// A call cancelled by its caller (or by the server's end of input) is not
// Herdr's fault: it is logged at debug level, never as "herdr unreachable".
func TestHerdrErrorLogsCancellationQuietly(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantWarn bool
	}{
		{"cancelled", fmt.Errorf("socket: dial x: %w: %w", socket.ErrTimeout, context.Canceled), false},
		{"timed out", fmt.Errorf("socket: dial x: %w: %w", socket.ErrTimeout, context.DeadlineExceeded), true},
		{"not running", fmt.Errorf("dial: %w", socket.ErrUnavailable), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf strings.Builder
			l := &Link{cfg: Config{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}} // no Herdr: the error mapping only
			if e := l.herdrError(opLookup, "agent.list", tt.err); e == nil {
				t.Fatal("no error")
			}
			if got := strings.Contains(buf.String(), "level=WARN"); got != tt.wantWarn {
				t.Errorf("WARN logged = %v, want %v; log:\n%s", got, tt.wantWarn, buf.String())
			}
		})
	}
}
