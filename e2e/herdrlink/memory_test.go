package herdrlink

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/testsupport/lineserver"
)

// bigHerdr answers ping, and agent.list with about size bytes: the caller
// and its peer in w1, then agents of another workspace with long working
// directories (fields herdr-link does not keep).
func bigHerdr(t *testing.T, size int) *lineserver.Server {
	t.Helper()
	var body bytes.Buffer
	body.WriteString(`{"pane_id":"w1:p1","terminal_id":"term_1","name":"brain","agent":"claude","agent_status":"idle","workspace_id":"w1","tab_id":"w1:t1","focused":false,"interactive_ready":true,"state_change_seq":1,"revision":1},`)
	body.WriteString(`{"pane_id":"w1:p2","terminal_id":"term_2","name":"reviewer","agent":"codex","agent_status":"idle","workspace_id":"w1","tab_id":"w1:t1","focused":false,"interactive_ready":true,"state_change_seq":1,"revision":1}`)
	cwd := "/home/u/" + strings.Repeat("deep/", 300)
	for i := 0; body.Len() < size; i++ {
		fmt.Fprintf(&body, `,{"pane_id":"w2:p%d","terminal_id":"term_x%d","name":"a%d","agent":"claude","agent_status":"working","workspace_id":"w2","tab_id":"w2:t1","focused":false,"interactive_ready":true,"state_change_seq":1,"cwd":%q,"revision":1}`, i, i, i, cwd)
	}
	list := body.Bytes()
	srv, err := lineserver.New(func(line []byte) []byte {
		var req struct {
			ID     string `json:"id"`
			Method string `json:"method"`
		}
		if json.Unmarshal(line, &req) != nil {
			return nil
		}
		id, _ := json.Marshal(req.ID)
		switch req.Method {
		case "ping":
			return []byte(`{"id":` + string(id) + `,"result":{"type":"pong","version":"0.8.2","protocol":20,"capabilities":null}}` + "\n")
		case "agent.list":
			out := make([]byte, 0, len(list)+100)
			out = append(out, `{"id":`...)
			out = append(out, id...)
			out = append(out, `,"result":{"type":"agent_list","agents":[`...)
			out = append(out, list...)
			return append(out, "]}}\n"...)
		}
		return []byte(`{"id":` + string(id) + `,"error":{"code":"invalid_request","message":"no"}}` + "\n")
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// rssKiB is the resident set size of process pid.
func rssKiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// server is the built binary serving MCP on pipes.
type server struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startServer(t *testing.T, env ...string) *server {
	t.Helper()
	// The deadline is generous: the test measures memory, on a machine that
	// may be busy running every other test.
	return startServerArgs(t, []string{"-timeout", "2m"}, env...)
}

// startServerArgs starts the binary without bootstrap, logging errors
// only, with the extra flags args and env added to the environment.
func startServerArgs(t *testing.T, args []string, env ...string) *server {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"-no-bootstrap", "-log-level", "error"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	return &server{cmd: cmd, in: in, out: bufio.NewReaderSize(outPipe, 1<<20)}
}

func (s *server) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// answers reads lines until n responses (lines with an id) arrived.
func (s *server) answers(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		l, err := s.out.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d answers: %v", len(out), err)
		}
		if strings.Contains(l, `"id":`) {
			out = append(out, l)
		}
	}
	return out
}

// A burst of eight concurrent calls that each read a ~27 MB agent.list
// leaves the server's RSS within 2× of idle.
func TestMemoryAfterLargeAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 27 MB answer")
	}
	herdr := bigHerdr(t, 27<<20)
	s := startServer(t, "HERDR_ENV=1", "HERDR_PANE_ID=w1:p1", "HERDR_SOCKET_PATH="+herdr.Path())
	s.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`)
	s.answers(t, 1)
	time.Sleep(300 * time.Millisecond) // let start-up settle before measuring
	idle := rssKiB(t, s.cmd.Process.Pid)
	const burst = 8
	for i := 1; i <= burst; i++ {
		s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"herdr_link_peers","arguments":{}}}`, i))
	}
	for _, a := range s.answers(t, burst) {
		if !strings.Contains(a, `\"peers\":[{\"name\":\"reviewer\"`) {
			t.Fatalf("answer %.300s", a)
		}
	}
	peak := rssKiB(t, s.cmd.Process.Pid)
	var after int
	for deadline := time.Now().Add(hangBound); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if after = rssKiB(t, s.cmd.Process.Pid); after <= 2*idle {
			break
		}
	}
	t.Logf("RSS idle %d KiB, right after the burst %d KiB, settled %d KiB", idle, peak, after)
	if after > 2*idle {
		t.Fatalf("RSS %d KiB after the burst, over 2× idle (%d KiB)", after, idle)
	}
}

// An agent.list over the bound is refused, not read whole.
func TestOversizeAnswerRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 40 MB answer")
	}
	herdr := bigHerdr(t, 40<<20)
	s := startServer(t, "HERDR_ENV=1", "HERDR_PANE_ID=w1:p1", "HERDR_SOCKET_PATH="+herdr.Path())
	s.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`)
	s.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"herdr_link_peers","arguments":{}}}`)
	a := s.answers(t, 2)[1]
	if !strings.Contains(a, "NOT_IN_HERDR: Herdr gave an answer herdr-link cannot read") {
		t.Fatalf("answer %s", a)
	}
}
