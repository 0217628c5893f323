package hosttest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/fakemodel"
)

// Config is what a run needs besides the host.
type Config struct {
	// Cache is the install cache (HERDR_LINK_HOSTS).
	Cache string
	// LinkBin and SimBin are herdr-link and herdr-sim built from the tree.
	LinkBin, SimBin string
	// Root is a folder for this run's sessions (kept for inspection).
	Root string
	// Repo is the module's root (for files a host needs from the tree,
	// such as an adapter).
	Repo string
	// SessionTimeout bounds each host process (SessionTimeout when zero).
	SessionTimeout time.Duration
	// Reference holds the footprint limits per host (testdata/reference.json).
	Reference map[string]Reference
	// ToolTimeout, when set, is the MCP tool-call timeout configured in
	// hosts that have a setting for it (Session.ToolTimeout).
	ToolTimeout time.Duration
}

// Reference is the largest footprint allowed for a host: bytes of
// herdr-link's tool definitions in one model request.
type Reference struct {
	DormantMax int    `json:"dormant_max"`
	ActiveMax  int    `json:"active_max"`
	Source     string `json:"source"`
}

// LoadReference reads testdata/reference.json.
func LoadReference(path string) (map[string]Reference, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r map[string]Reference
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Panes of the scenario's world.
const (
	SenderPane   = "w1:p1"
	ReviewerPane = "w1:p2"
	OtherPane    = "w2:p1" // "ops", in another workspace: must stay invisible
)

// World returns the scenario's world: "brain" (the sender) and "reviewer"
// in one workspace, both of the host's kind, and "ops" in another. Turns
// and submission are short (100 ms), so a duplicate that queues behind the
// turn the first copy started reaches the model within settleWait; what
// each kind makes of the text is unchanged.
func World(kind string) string { return WorldOf(kind, kind) }

// WorldOf is World with the reviewer of another host's kind.
func WorldOf(kind, reviewerKind string) string {
	return fmt.Sprintf(`{"workspaces":[
 {"id":"w1","label":"app","tabs":[{"id":"w1:t1","panes":[
  {"id":%q,"cwd":"/home/dev/app","agent":{"kind":%q,"name":"brain","status":"idle","turn_ms":100,"submit_ms":100}},
  {"id":%q,"cwd":"/home/dev/app","agent":{"kind":%q,"name":"reviewer","status":"idle","turn_ms":100,"submit_ms":100}}]}]},
 {"id":"w2","label":"infra","tabs":[{"id":"w2:t1","panes":[
  {"id":%q,"cwd":"/home/dev/infra","agent":{"kind":"claude","name":"ops","status":"idle"}}]}]}]}`,
		SenderPane, kind, ReviewerPane, reviewerKind, OtherPane)
}

// SessionResult is one host session of a run.
type SessionResult struct {
	Name string `json:"name"`
	// Host is set when the session ran another host (Mode.Reviewer).
	Host     string               `json:"host,omitempty"`
	Pane     string               `json:"pane"`
	Outcome  Outcome              `json:"-"`
	Duration time.Duration        `json:"duration_ns"`
	Requests []fakemodel.Request  `json:"requests"`
	Errors   []string             `json:"errors,omitempty"`
	Script   fakemodel.Script     `json:"script"`
	Metrics  SessionMetrics       `json:"metrics"`
	Strays   int                  `json:"strays,omitempty"`
	Err      string               `json:"err,omitempty"`
	Extra    map[string]time.Time `json:"-"`
}

// Result is one host and mode: what the model saw, what landed in the
// panes, and the verdict.
type Result struct {
	Host     string          `json:"host"`
	Display  string          `json:"display"`
	Version  string          `json:"version"`
	Mode     string          `json:"mode"`
	Note     string          `json:"note"`
	Sessions []SessionResult `json:"sessions"`
	// From the sender's session.
	NamesBefore []string `json:"names_before"`
	NamesAfter  []string `json:"names_after"`
	ListChanged string   `json:"list_changed"`
	Honoured    bool     `json:"honoured"`
	// Largest herdr-link tool definitions in one request, over all sessions.
	DormantBytes int `json:"dormant_bytes"`
	ActiveBytes  int `json:"active_bytes"`
	// ResultBytes is the size of the first result of each operation.
	ResultBytes map[string]int `json:"result_bytes"`
	// Delivered counts the envelopes that landed, by pane.
	Delivered map[string]int `json:"delivered"`
	Duration  time.Duration  `json:"duration_ns"`
	Failures  []string       `json:"failures,omitempty"`
	// OutsideShown: in the session outside Herdr, herdr-link's reason for
	// the empty tool list reached the model ("yes", "no"; "" not run).
	OutsideShown string `json:"outside_shown,omitempty"`
	// Footprint failures are kept apart: they are the one check another
	// branch's work (the tool-surface reduction) is expected to fix.
	FootprintFailures []string `json:"footprint_failures,omitempty"`
}

// Verdict is PASS or FAIL.
func (r *Result) Verdict() string {
	if len(r.Failures) == 0 && len(r.FootprintFailures) == 0 {
		return "PASS"
	}
	return "FAIL"
}

func (r *Result) failf(format string, a ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, a...))
}

// Budget bounds a whole host-and-mode run (three sessions), and
// SessionTimeout each host process. A session takes 1–10 s on an idle
// 2-core machine; OpenCode's start-up alone took 20–40 s on one loaded
// by a dozen other jobs.
const (
	Budget         = 5 * time.Minute
	SessionTimeout = 150 * time.Second
)

// Messages of the scenario.
const (
	RequestMessage = "Please review the checkout refactor in src/checkout (hosttest %s)."
	ReplyMessage   = "Reviewed: two nits, otherwise good to merge (hosttest %s)."
)

// Run drives the scenario for one host and mode: the sender activates,
// lists peers and sends to reviewer; the reviewer (a second host session
// in its pane, prompted with what landed there) replies with reply_to; the
// sender (a third session, prompted with the reply) closes the reviewer.
func Run(ctx context.Context, h *Host, m Mode, cfg Config) *Result {
	r := &Result{Host: h.Name, Display: h.Display, Version: h.Version, Mode: m.Name, Note: m.Note,
		ResultBytes: map[string]int{}, Delivered: map[string]int{}}
	start := time.Now()
	defer func() {
		if len(r.Failures) == 0 {
			r.checkOutside(ctx, h, m, cfg)
		}
		r.checkContract(cfg.Repo)
		r.footprint(cfg.Reference[h.Name])
		if r.Duration = time.Since(start); r.Duration > Budget {
			r.failf("the run took %s, over the budget of %s", r.Duration.Round(time.Millisecond), Budget)
		}
	}()
	if !h.Installed(cfg.Cache) {
		r.failf("%s %s is not installed in %s (run scripts/hosts.sh, which installs it with npm)", h.Display, h.Version, cfg.Cache)
		return r
	}
	sc := &scenario{ctx: ctx, r: r, h: h, m: m, cfg: cfg}
	if !sc.reviewerHost() {
		return r
	}
	srv, err := StartSim(cfg.SimBin, WorldOf(h.Kind, sc.rh.Kind))
	if err != nil {
		r.failf("simulator: %v", err)
		return r
	}
	defer srv.Close()
	sc.srv = srv
	sc.tag = fmt.Sprintf("%s-%s-%d", h.Name, m.Name, time.Now().UnixNano()%1e6)
	sc.reqMsg, sc.replyMsg = fmt.Sprintf(RequestMessage, sc.tag), fmt.Sprintf(ReplyMessage, sc.tag)
	if req, ok := sc.send(); ok {
		if reply, ok := sc.reply(req); ok {
			sc.close(reply)
		}
	}
	if len(r.Failures) == 0 {
		sc.start()
	}
	return r
}

// scenario is one run of Run: the hosts and modes of its sessions, the
// simulator, and the messages (tagged, so a stray copy from another run
// cannot pass).
type scenario struct {
	ctx              context.Context
	r                *Result
	h, rh            *Host // the sender's host, the reviewer's
	m, rm            Mode
	cfg              Config
	srv              *Sim
	tag              string
	reqMsg, replyMsg string
}

// reviewerHost picks the reviewer's host and mode: the sender's, or the
// one the mode names (installed on demand).
func (sc *scenario) reviewerHost() bool {
	sc.rh, sc.rm = sc.h, sc.m
	if sc.m.Reviewer == "" {
		return true
	}
	name, mode, _ := strings.Cut(sc.m.Reviewer, "/")
	if sc.rh = Lookup(name); sc.rh == nil {
		sc.r.failf("mode %s: no host %q to review with", sc.m.Name, name)
		return false
	}
	if err := sc.rh.Install(sc.ctx, sc.cfg.Cache); err != nil {
		sc.r.failf("the reviewer's host: %v", err)
		return false
	}
	sc.rm = sc.rh.Modes[0]
	for _, x := range sc.rh.Modes {
		if x.Name == mode {
			sc.rm = x
		}
	}
	return true
}

// send: the sender activates, lists peers (reviewer, never ops) and sends.
func (sc *scenario) send() (delivery, bool) {
	r, m := sc.r, sc.m
	a := runSession(sc.ctx, sc.h, m, sc.cfg, sc.srv, "sender", SenderPane, sc.tag,
		"Use Herdr Link: find the agent named reviewer and ask it to review the checkout refactor.",
		fakemodel.Script{Steps: []fakemodel.Step{
			{Call: fakemodel.Gateway},
			{Call: fakemodel.Peers},
			{Call: fakemodel.Send, Args: map[string]any{"to": "reviewer", "message": sc.reqMsg}},
			{Text: "Asked reviewer for a review."},
		}})
	r.Sessions = append(r.Sessions, a)
	if !r.checkSession(&a, []string{"activate", "peers", "send"}) {
		return delivery{}, false
	}
	r.senderMetrics(a)
	if r.Honoured != m.ListChanged {
		r.failf("sender: list_changed %s, but the mode expects it honoured=%v", r.ListChanged, m.ListChanged)
	}
	r.checkSurface(a, m)
	if res, ok := firstResult(a.Requests, "peers"); ok {
		if !strings.Contains(res.Text, `"reviewer"`) {
			r.failf("sender: peers result does not list reviewer: %.200q", res.Text)
		}
		if strings.Contains(res.Text, `"ops"`) {
			r.failf("sender: peers result lists ops, an agent of another workspace")
		}
	}
	return r.delivered(sc.srv, ReviewerPane, "brain", "reviewer", sc.reqMsg, "")
}

// reply: the reviewer, prompted with what landed in its pane, replies.
func (sc *scenario) reply(req delivery) (delivery, bool) {
	r := sc.r
	reviewer := "reviewer"
	if sc.rh != sc.h {
		reviewer = "reviewer-" + sc.rh.Name + "-" + sc.rm.Name
	}
	b := runSession(sc.ctx, sc.rh, sc.rm, sc.cfg, sc.srv, reviewer, ReviewerPane, sc.tag, req.text,
		fakemodel.Script{Steps: []fakemodel.Step{
			{Call: fakemodel.Gateway},
			{Call: fakemodel.Send, Args: map[string]any{"to": "${envelope.from}", "message": sc.replyMsg, "reply_to": "${envelope.id}"}},
			{Text: "Replied to brain."},
		}})
	if sc.rh != sc.h {
		b.Host = sc.rh.Name
	}
	r.Sessions = append(r.Sessions, b)
	if !r.checkSession(&b, []string{"activate", "send"}) {
		return delivery{}, false
	}
	if main := mainRequests(b.Requests); len(main) == 0 || !strings.Contains(main[0].LastUser, req.env.ID) {
		r.failf("reviewer: the model's first request does not carry the delivered envelope %s", req.env.ID)
	}
	return r.delivered(sc.srv, SenderPane, "reviewer", "brain", sc.replyMsg, req.env.ID)
}

// close: the sender, prompted with the reply, closes the reviewer; nothing
// reached the other workspace and the sender got only the reply.
func (sc *scenario) close(reply delivery) {
	r, srv := sc.r, sc.srv
	c := runSession(sc.ctx, sc.h, sc.m, sc.cfg, srv, "closer", SenderPane, sc.tag, reply.text,
		fakemodel.Script{Steps: []fakemodel.Step{
			{Call: fakemodel.Gateway},
			{Call: fakemodel.Close, Args: map[string]any{"agent": "${envelope.from}"}},
			{Text: "Closed reviewer."},
		}})
	r.Sessions = append(r.Sessions, c)
	if !r.checkSession(&c, []string{"activate", "close"}) {
		return
	}
	panes, err := srv.Panes()
	switch {
	case err != nil:
		r.failf("closer: %v", err)
	case slices.Contains(panes, ReviewerPane):
		r.failf("closer: the reviewer's pane is still open")
	case !slices.Contains(panes, OtherPane) || !slices.Contains(panes, SenderPane):
		r.failf("closer: panes other than the reviewer's are gone: %v", panes)
	}
	if turns, err := srv.Turns(OtherPane); err != nil || len(turns) != 0 {
		r.failf("the other workspace's agent received %d turn(s) (%v)", len(turns), err)
	}
	if turns, err := srv.Turns(SenderPane); err != nil || len(envelopesIn(turns)) != 1 {
		r.failf("the sender's pane received %d envelope(s), want the one reply (%v)", len(envelopesIn(turns)), err)
	}
}

// runSession runs one host session in a pane against its own fake model.
func runSession(ctx context.Context, h *Host, m Mode, cfg Config, srv *Sim, name, pane, tag, prompt string, script fakemodel.Script) SessionResult {
	sr := SessionResult{Name: name, Pane: pane, Script: script}
	dir := filepath.Join(cfg.Root, h.Name+"-"+m.Name, name)
	s := &Session{Host: h, Mode: m, Name: name, Dir: dir, Home: filepath.Join(dir, "home"), Work: filepath.Join(dir, "work"),
		HostBin: h.BinPath(cfg.Cache), HostDir: h.Dir(cfg.Cache), Repo: cfg.Repo, LinkBin: cfg.LinkBin, PaneEnv: paneEnv(srv, pane), Prompt: prompt,
		Marker: "HERDR_LINK_HOSTTEST=" + tag + "-" + name, ToolTimeout: cfg.ToolTimeout}
	if n := len(script.Steps); n > 0 {
		s.Done = script.Steps[n-1].Text
	}
	for _, d := range []string{s.Home, s.Work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			sr.Err = err.Error()
			return sr
		}
	}
	logf, err := os.Create(filepath.Join(dir, "model.jsonl"))
	if err != nil {
		sr.Err = err.Error()
		return sr
	}
	defer logf.Close()
	fm, err := fakemodel.Start(fakemodel.Options{Script: script, Log: logf, KeepBodies: true})
	if err != nil {
		sr.Err = err.Error()
		return sr
	}
	s.ModelURL = fm.URL
	timeout := cfg.SessionTimeout
	if timeout == 0 {
		timeout = SessionTimeout
	}
	sr.Outcome = run(ctx, s, timeout)
	fm.Close()
	sr.Duration, sr.Strays = sr.Outcome.Duration, sr.Outcome.Strays
	if sr.Outcome.Err != nil {
		sr.Err = sr.Outcome.Err.Error()
	}
	sr.Requests, sr.Errors = fm.Requests(), fm.Errors()
	// The raw bodies, for inspection (what the host really sent).
	if err := os.MkdirAll(filepath.Join(dir, "bodies"), 0o755); err == nil {
		for i := range sr.Requests {
			q := &sr.Requests[i]
			_ = os.WriteFile(filepath.Join(dir, "bodies", fmt.Sprintf("%03d-%s.json", q.Seq, q.API)), q.Body, 0o644)
			q.Body = nil
		}
	}
	sr.Metrics = measure(sr.Requests)
	return sr
}

// How long to wait for a delivery to be submitted, and for an Enter
// still on its way (Herdr sends it 300 ms after the text).
const (
	deliveryWait = 10 * time.Second
	settleWait   = time.Second
)
