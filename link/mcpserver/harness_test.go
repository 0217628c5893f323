package mcpserver_test

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/link/mcpserver"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

var update = flag.Bool("update", false, "rewrite golden transcripts")

func TestMain(m *testing.M) {
	flag.Parse()
	code := simtest.Main(m)
	os.Exit(code)
}

const world = `{"workspaces":[
 {"id":"w1","label":"app","tabs":[{"id":"w1:t1","panes":[
   {"id":"w1:p1","agent":{"kind":"claude","name":"brain","status":"working"}},
   {"id":"w1:p2","agent":{"kind":"codex","name":"reviewer","status":"idle"}},
   {"id":"w1:p3","agent":{"kind":"pi","status":"idle"}},
   {"id":"w1:p4"},
   {"id":"w1:p5","agent":{"kind":"claude","name":"stuck","status":"blocked"}}
 ]}]},
 {"id":"w2","label":"infra","tabs":[{"id":"w2:t1","panes":[
   {"id":"w2:p1","agent":{"kind":"claude","name":"ops","status":"idle"}}
 ]}]}]}`

func newWorld(t testing.TB) *sockettest.World {
	w, err := sockettest.ParseWorld([]byte(world))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// harness runs a server in process over pipes.
type harness struct {
	t     testing.TB
	w     *io.PipeWriter
	lines chan string
	done  chan error
	srv   *sockettest.Server
	world *sockettest.World
}

type hopt struct {
	pane    string // "" with gated=false means outside Herdr
	outside bool
	opts    func(*mcpserver.Options)
	simOpts []func(*sockettest.Server)
	timeout time.Duration
	maxLine int
}

func start(t testing.TB, o hopt) *harness {
	t.Helper()
	h := &harness{t: t, lines: make(chan string, 1024), done: make(chan error, 1)}
	h.world = newWorld(t)
	h.srv = simtest.New(t, h.world, o.simOpts...)
	opt := mcpserver.Options{Version: "test", MaxLineBytes: o.maxLine}
	if !o.outside {
		pane := o.pane
		if pane == "" {
			pane = "w1:p1"
		}
		c := h.srv.Client()
		c.Timeout = 2 * time.Second
		if o.timeout > 0 {
			c.Timeout = o.timeout
		}
		opt.Link = mustLink(t, link.Config{Herdr: link.SocketHerdr{Client: c}, PaneID: pane, CallTimeout: c.Timeout, Outbox: testOutbox(t)})
	}
	if o.opts != nil {
		o.opts(&opt)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h.w = inW
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.done <- mcpserver.Serve(t.Context(), inR, outW, opt)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	// At the end the input closes and Serve (its courier too) is waited
	// for before the test's directories go: the courier writes into the
	// outbox until it has stopped.
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return within 10 s of the end of its input")
		}
	})
	return h
}

func (h *harness) send(line string) {
	h.t.Helper()
	if _, err := h.w.Write([]byte(line + "\n")); err != nil {
		h.t.Fatalf("write: %v", err)
	}
}

// next returns the next output line.
func (h *harness) next() string {
	h.t.Helper()
	select {
	case l, ok := <-h.lines:
		if !ok {
			h.t.Fatal("server output closed")
		}
		return l
	case <-time.After(5 * time.Second):
		h.t.Fatal("no output within 5s")
	}
	return ""
}

// until reads lines up to and including the response with id (raw JSON).
func (h *harness) until(id string) []string {
	h.t.Helper()
	var out []string
	for {
		l := h.next()
		out = append(out, l)
		var m struct {
			ID jsonx.RawMessage `json:"id"`
		}
		_ = jsonx.Unmarshal([]byte(l), &m)
		if string(m.ID) == id {
			return out
		}
	}
}

// call sends a request and returns every line up to its response.
func (h *harness) call(id int, method string, params string) []string {
	h.t.Helper()
	if params == "" {
		params = "{}"
	}
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	return h.until(fmt.Sprint(id))
}

// quiet asserts that the line just sent produced no output: a ping sent
// after it must be the next thing answered.
func (h *harness) quiet() {
	h.t.Helper()
	h.send(`{"jsonrpc":"2.0","id":"sync","method":"ping"}`)
	if l := h.next(); l != `{"jsonrpc":"2.0","id":"sync","result":{}}` {
		h.t.Fatalf("unexpected output %s", l)
	}
}

var (
	validIDRE = regexp.MustCompile(`^("[^"]*"|[0-9]+)$`)
	hlIDRE    = regexp.MustCompile(`hl_[a-z0-9]+_[a-z0-9]+`)
	goldenIO  = regexp.MustCompile(`^(->|=>|<-) (.*)$`)
)

func normalize(s string) string { return hlIDRE.ReplaceAllString(s, "hl_ID") }

// runTranscript plays a golden transcript: each "->" line is sent; for a
// request the output up to its response is collected, for anything else
// the output up to a sentinel ping's answer. The output must equal the
// "<-" lines that follow (after message ids are normalised). A "=>" line
// is sent like "->" but always synchronised with the sentinel. A "->"
// batch that holds requests waits for the array that answers it.
func runTranscript(t *testing.T, file string, o hopt) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, o)
	var out strings.Builder
	var got, want []string
	flush := func() {
		for i := 0; i < len(got) || i < len(want); i++ {
			g, w := "", ""
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w && !*update {
				t.Errorf("%s: output %d differs\n got: %s\nwant: %s", filepath.Base(file), i, g, w)
			}
		}
		for _, g := range got {
			out.WriteString("<- " + g + "\n")
		}
		got, want = nil, nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		m := goldenIO.FindStringSubmatch(line)
		if m == nil {
			if strings.TrimSpace(line) != "" {
				flush()
				out.WriteString(line + "\n")
			}
			continue
		}
		if m[1] == "<-" {
			want = append(want, m[2])
			continue
		}
		flush()
		out.WriteString(line + "\n")
		h.send(m[2])
		var msg struct {
			ID     jsonx.RawMessage `json:"id"`
			Method string           `json:"method"`
		}
		// "=>" sends a line whose id the server cannot read (oversized):
		// its answer comes with id null, so wait for the sentinel instead.
		isReq := m[1] == "->" && jsonx.Unmarshal([]byte(m[2]), &msg) == nil && msg.Method != "" && validIDRE.MatchString(string(msg.ID)) &&
			strings.Contains(m[2], `"jsonrpc":"2.0"`)
		var lines []string
		// "->" with a batch that holds requests: wait for its one array.
		isBatch := m[1] == "->" && strings.HasPrefix(m[2], "[") && strings.Contains(m[2], `"id"`)
		if isBatch {
			for {
				l := h.next()
				lines = append(lines, l)
				if strings.HasPrefix(l, "[") {
					break
				}
			}
		} else if isReq {
			lines = h.until(string(msg.ID))
		} else {
			h.send(`{"jsonrpc":"2.0","id":"sync","method":"ping"}`)
			lines = h.until(`"sync"`)
			lines = lines[:len(lines)-1]
		}
		for _, l := range lines {
			got = append(got, normalize(l))
		}
	}
	flush()
	if *update {
		if err := os.WriteFile(file, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGoldenTranscripts(t *testing.T) {
	tests := []struct {
		file string
		o    hopt
	}{
		{"handshake.txt", hopt{}},
		{"bad_input.txt", hopt{maxLine: 4096}},
		{"tools.txt", hopt{}},
		{"old_revision.txt", hopt{}},
		{"outside_herdr.txt", hopt{outside: true, opts: func(o *mcpserver.Options) {
			o.Outside = link.Gate{Failed: link.FailedHerdrEnv}.Advice()
		}}},
		{"herdr_core.txt", hopt{outside: true, opts: func(o *mcpserver.Options) {
			o.Outside = link.Gate{Failed: link.FailedHerdrCore}.Advice()
		}}},
		{"lifecycle.txt", hopt{}},
		{"batch.txt", hopt{}},
	}
	// The transcripts are 0.8.2's, whatever $HERDR_SIM_VERSION says: a
	// 0.9 Herdr's turns start and end on a timeline of their own, so a
	// send after the first one may find the turn over and type instead of
	// hold, and the transcript would be another one.
	pin := func(s *sockettest.Server) {
		if err := s.UseHerdr("0.8.2"); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tt.o.simOpts = append([]func(*sockettest.Server){pin}, tt.o.simOpts...)
			runTranscript(t, filepath.Join("testdata", tt.file), tt.o)
		})
	}
}

// testOutbox is an outbox of its own for one test.
func testOutbox(t testing.TB) *outbox.Store {
	t.Helper()
	st, err := outbox.Open(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// mustLink makes the Link of cfg or fails the test.
func mustLink(t testing.TB, cfg link.Config) *link.Link {
	t.Helper()
	l, err := link.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return l
}

// relink makes a Link of l's Config changed by set, for a test that
// configures a Link its helper made (before it is used).
func relink(t testing.TB, l *link.Link, set func(*link.Config)) *link.Link {
	t.Helper()
	cfg := l.Config()
	set(&cfg)
	return mustLink(t, cfg)
}
