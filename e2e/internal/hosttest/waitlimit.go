package hosttest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/fakemodel"
)

// The wait-limit scenario (HERDR_LINK_HOSTS_WAITLIMIT=1): the sender
// sends a request to a reviewer that stays working, then calls
// herdr_link_wait on it with the longest timeout (WaitLimitTimeout). The
// request stays pending, so herdr-link answers only at the timeout; the
// scenario records what the host did meanwhile through an MCP tap
// (tap.go): whether the call carried a progressToken, whether the host
// cancelled it (when), when the result reached the model and what the
// model saw. It measures a host's tool-call limit and is not a pass/fail
// check; each run takes about a minute.

// WaitLimitTimeout is the timeout_s the scenario asks for (herdr-link's
// maximum).
const WaitLimitTimeout = 50

// waitLimitSession bounds the sender's session: the wait and the host's
// start-up and ending.
const waitLimitSession = 220 * time.Second

// Probe is a variant of the scenario: plain (herdr-link's own answer at
// 50 s), or the tap holding the answer until Hold after the call, with
// or without progress meanwhile, to find the host's own limit and
// whether progress extends it.
type Probe struct {
	Name     string
	Hold     time.Duration
	Progress bool
	// ToolTimeout sets the host's own tool-call timeout (Config.ToolTimeout).
	ToolTimeout time.Duration
}

// Probes are the variants HERDR_LINK_HOSTS_WAITLIMIT selects: "1" (plain),
// "hold" (held to 150 s, progress every 5 s), "hold-silent" (held, no
// progress), "timeout-20" (plain, with the host's tool-call timeout set
// to 20 s where it has a setting: what a host timeout looks like).
var Probes = map[string]Probe{
	"timeout-20":  {Name: "host timeout set to 20s", ToolTimeout: 20 * time.Second},
	"1":           {Name: "plain"},
	"hold":        {Name: "hold 150s + progress", Hold: 150 * time.Second, Progress: true},
	"hold-silent": {Name: "hold 150s, no progress", Hold: 150 * time.Second},
}

// WaitLimit is what one host and mode did with a long herdr_link_wait.
type WaitLimit struct {
	Probe   string `json:"probe"`
	Host    string `json:"host"`
	Display string `json:"display"`
	Version string `json:"version"`
	Mode    string `json:"mode"`
	// Called says a wait call reached herdr-link.
	Called bool `json:"called"`
	// Via is how the model called it ("direct" or "gateway").
	Via string `json:"via,omitempty"`
	// ProgressToken is the call's _meta.progressToken ("" when none).
	ProgressToken string `json:"progress_token,omitempty"`
	// Progress counts the notifications/progress herdr-link sent for it.
	Progress int `json:"progress"`
	// Answered is how long after the call herdr-link answered it (0: not).
	Answered time.Duration `json:"answered_ns"`
	// Cancelled is how long after the call the host sent
	// notifications/cancelled for it (0: not), with its reason.
	Cancelled       time.Duration `json:"cancelled_ns"`
	CancelledReason string        `json:"cancelled_reason,omitempty"`
	// Released is how long after the call the tap passed a held answer
	// on (0: not held, or dropped at a cancellation).
	Released time.Duration `json:"released_ns"`
	// ServerEnded is how long after the call herdr-link's stdin closed or
	// it got a signal (0: not before the call ended).
	ServerEnded time.Duration `json:"server_ended_ns"`
	// ModelSaw is the wait's result as the model got it, and ModelAfter
	// how long after the call the model got it (0: never).
	ModelSaw   string        `json:"model_saw,omitempty"`
	ModelError bool          `json:"model_error,omitempty"`
	ModelAfter time.Duration `json:"model_after_ns"`
	// Session is the sender's session (its model log included).
	Session SessionResult `json:"session"`
	Err     string        `json:"err,omitempty"`
	start   time.Time
	held    bool
}

// Verdict sums up what the host did.
func (w *WaitLimit) Verdict() string {
	answer := w.Answered
	if w.held {
		answer = w.Released
	}
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	switch {
	case !w.Called:
		return "no wait call reached herdr-link"
	case w.Cancelled > 0 && (answer == 0 || w.Cancelled < answer):
		return fmt.Sprintf("host cancelled the call after %s", r(w.Cancelled))
	case w.ModelAfter == 0:
		return "the result never reached the model"
	case answer == 0 || w.ModelAfter < answer:
		return fmt.Sprintf("host gave the model its own result after %s (herdr-link not told)", r(w.ModelAfter))
	case w.ModelError:
		return fmt.Sprintf("answered after %s; the model saw an error", r(answer))
	case w.held:
		return fmt.Sprintf("held answer passed on (released after %s)", r(answer))
	}
	return fmt.Sprintf("result passed on (answered after %s)", r(answer))
}

// WaitWorld is World with a reviewer whose turn lasts 10 minutes: a
// request to it stays pending.
func WaitWorld(kind string) string {
	return strings.Replace(World(kind), `"name":"reviewer","status":"idle","turn_ms":100`, `"name":"reviewer","status":"idle","turn_ms":600000`, 1)
}

// RunWaitLimit runs the wait-limit scenario for one host and mode.
func RunWaitLimit(ctx context.Context, h *Host, m Mode, cfg Config, probe Probe) *WaitLimit {
	w := &WaitLimit{Host: h.Name, Display: h.Display, Version: h.Version, Mode: m.Name, Probe: probe.Name, held: probe.Hold > 0}
	if !h.Installed(cfg.Cache) {
		w.Err = "not installed"
		return w
	}
	world := WaitWorld(h.Kind)
	if world == World(h.Kind) {
		w.Err = "the wait world has no long turn"
		return w
	}
	srv, err := StartSim(cfg.SimBin, world)
	if err != nil {
		w.Err = err.Error()
		return w
	}
	defer srv.Close()
	dir := filepath.Join(cfg.Root, h.Name+"-"+m.Name)
	tapLog := filepath.Join(dir, "tap.jsonl")
	tap, err := InstallTap(filepath.Join(dir, "tap"), tapConfig{Real: cfg.LinkBin, Log: tapLog, Hold: probe.Hold, Progress: probe.Progress})
	if err != nil {
		w.Err = err.Error()
		return w
	}
	c := cfg
	c.LinkBin, c.SessionTimeout, c.ToolTimeout = tap, waitLimitSession, probe.ToolTimeout
	tag := fmt.Sprintf("%s-%s-wait-%d", h.Name, m.Name, time.Now().UnixNano()%1e6)
	a := runSession(ctx, h, m, c, srv, "sender", SenderPane, tag,
		"Use Herdr Link: ask the agent named reviewer to review the checkout refactor, then wait for its answer.",
		fakemodel.Script{Steps: []fakemodel.Step{
			{Call: fakemodel.Gateway},
			{Call: fakemodel.Send, Args: map[string]any{"to": "reviewer", "message": fmt.Sprintf(RequestMessage, tag)}},
			{Call: fakemodel.Wait, Args: map[string]any{"id": "${result.id}", "timeout_s": WaitLimitTimeout}},
			{Text: "Waited for reviewer."},
		}})
	w.Session = a
	if a.Err != "" {
		w.Err = a.Err
	}
	if len(a.Errors) > 0 {
		w.Err = strings.TrimSpace(w.Err + "; model: " + strings.Join(a.Errors, "; "))
	}
	lines, err := ReadTap(tapLog)
	if err != nil {
		w.Err = strings.TrimSpace(w.Err + "; tap: " + err.Error())
	}
	w.fromTap(lines)
	w.fromModel(a.Requests)
	return w
}

type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// waitCall reports whether a tools/call's params are a wait (the tool
// or the gateway's wait action), and its _meta.progressToken.
func waitCall(params json.RawMessage) (bool, string) {
	var p struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false, ""
	}
	isWait := strings.HasSuffix(p.Name, fakemodel.Wait) || p.Arguments["action"] == "wait"
	tok := string(p.Meta.ProgressToken)
	if tok == "null" {
		tok = ""
	}
	return isWait, tok
}

// fromTap reads the wait call's life from the tap's log: the call, its
// progress, its answer, its cancellation.
func (w *WaitLimit) fromTap(lines []TapLine) {
	var id string
	var start time.Time
	var pid int
	for _, l := range lines {
		var m rpcMsg
		if l.Dir == "in" || l.Dir == "out" {
			if json.Unmarshal(l.Msg, &m) != nil {
				continue
			}
		}
		switch {
		case id == "" && l.Dir == "in" && m.Method == "tools/call":
			if ok, tok := waitCall(m.Params); ok {
				id, start, pid, w.Called, w.ProgressToken = string(m.ID), l.Time, l.PID, true, tok
			}
		case id == "" || l.PID != pid:
		case l.Dir == "out" && m.Method == "notifications/progress":
			w.Progress++
		case l.Dir == "out" && m.Method == "" && string(m.ID) == id && w.Answered == 0:
			w.Answered = l.Time.Sub(start)
		case l.Dir == "hold" && string(l.Msg) == `"answer released"`:
			w.Released = l.Time.Sub(start)
		case l.Dir == "in" && m.Method == "notifications/cancelled" && w.Cancelled == 0:
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
				Reason    string          `json:"reason"`
			}
			if json.Unmarshal(m.Params, &p) == nil && string(p.RequestID) == id {
				w.Cancelled, w.CancelledReason = l.Time.Sub(start), p.Reason
			}
		case (l.Dir == "eof" || l.Dir == "signal") && w.ServerEnded == 0 && w.Answered == 0:
			w.ServerEnded = l.Time.Sub(start)
		}
	}
	if !w.Called {
		return
	}
	if w.Cancelled == 0 && w.Answered == 0 && w.ServerEnded == 0 {
		w.Err = strings.TrimSpace(w.Err + "; the wait call never ended at herdr-link")
	}
	w.start = start
}

// fromModel finds the wait call the model made and the request that
// carried its result back.
func (w *WaitLimit) fromModel(reqs []fakemodel.Request) {
	var call string
	for _, q := range reqs {
		if call == "" && q.Reply.Kind == "call" && (q.Reply.Canonical == fakemodel.Wait || strings.Contains(string(q.Reply.Args), `"action":"wait"`)) {
			call, w.Via = q.Reply.CallID, q.Reply.Via
			continue
		}
		if call == "" {
			continue
		}
		for _, r := range q.Results {
			if r.CallID == call && w.ModelAfter == 0 {
				w.ModelSaw, w.ModelError = r.Text, r.IsError
				if !w.start.IsZero() {
					w.ModelAfter = q.Time.Sub(w.start)
				}
			}
		}
	}
}

// WaitLimitTable renders the results as Markdown.
func WaitLimitTable(ws []*WaitLimit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "herdr_link_wait with timeout_s %d on a request that stays pending.\n\n", WaitLimitTimeout)
	b.WriteString("| host | version | mode | probe | via | progressToken | progress sent | herdr-link answered | host cancelled | model got the result | what the model saw | verdict |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	d := func(x time.Duration) string {
		if x == 0 {
			return "—"
		}
		return x.Round(100 * time.Millisecond).String()
	}
	for _, w := range ws {
		tok := "no"
		if w.ProgressToken != "" {
			tok = "yes (`" + w.ProgressToken + "`)"
		}
		canc := d(w.Cancelled)
		if w.CancelledReason != "" {
			canc += fmt.Sprintf(" (%q)", w.CancelledReason)
		}
		saw := w.ModelSaw
		if len(saw) > 160 {
			saw = saw[:160] + "…"
		}
		if w.ModelError {
			saw = "error: " + saw
		}
		saw = strings.ReplaceAll(strings.ReplaceAll(saw, "|", `\|`), "\n", " ")
		verdict := w.Verdict()
		if w.Err != "" {
			first, _, _ := strings.Cut(w.Err, "\n")
			verdict += "; " + strings.ReplaceAll(first, "|", `\|`)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s |\n",
			w.Display, w.Version, w.Mode, w.Probe, w.Via, tok, w.Progress, d(w.Answered), canc, d(w.ModelAfter), saw, verdict)
	}
	return b.String()
}

// writeWaitLimit writes waitlimit.md and waitlimit.json to out.
func writeWaitLimit(out string, ws []*WaitLimit) (string, error) {
	t := WaitLimitTable(ws)
	if err := os.WriteFile(filepath.Join(out, "waitlimit.md"), []byte(t), 0o644); err != nil {
		return t, err
	}
	b, err := json.MarshalIndent(ws, "", "  ")
	if err != nil {
		return t, err
	}
	return t, os.WriteFile(filepath.Join(out, "waitlimit.json"), b, 0o644)
}
