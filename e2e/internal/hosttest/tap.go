package hosttest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The MCP tap: a session's herdr-link can be a link named "herdr-link"
// to the test binary itself (TapMain runs instead of the tests when the
// binary is started under that name), beside a tap.json that names the
// real herdr-link and a log file. The tap runs the real herdr-link with
// the same arguments and records every line between the host and it,
// with the time, so a scenario sees what the host sent (a tool call's
// _meta, a notifications/cancelled) and when. `herdr-link config HOST`
// through the tap prints the tap's path in place of the real binary's.
// Nothing reaches the tap through the environment: some hosts pass their
// MCP servers only a list of variables.

// tapName is the file name that makes the test binary a tap.
const tapName = "herdr-link"

// tapConfig is tap.json, beside the tap.
type tapConfig struct {
	Real string `json:"real"`
	Log  string `json:"log"`
	// Hold, when set, keeps herdr-link's answer to a herdr_link_wait call
	// from the host until Hold after the call (or its cancellation), so
	// the host's own limit shows past herdr-link's maximum; Progress sends
	// notifications/progress every 5 s meanwhile (when the call has a
	// progressToken), as herdr-link does while it waits.
	Hold     time.Duration `json:"hold,omitempty"`
	Progress bool          `json:"progress,omitempty"`
}

// tapProgressEvery is the spacing of the tap's progress while it holds.
const tapProgressEvery = 5 * time.Second

// TapLine is one line of the tap's log: the direction ("in", host to
// herdr-link; "out", herdr-link to host) and the JSON-RPC message.
type TapLine struct {
	Time time.Time       `json:"time"`
	Dir  string          `json:"dir"`
	PID  int             `json:"pid"`
	Msg  json.RawMessage `json:"msg"`
}

// IsTap reports whether this process was started as a tap.
func IsTap() bool { return filepath.Base(os.Args[0]) == tapName }

// InstallTap makes dir/herdr-link a tap of real, logging to log, and
// returns its path.
func InstallTap(dir string, c tapConfig) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "tap.json"), b, 0o644); err != nil {
		return "", err
	}
	p := filepath.Join(dir, tapName)
	_ = os.Remove(p)
	return p, os.Symlink(self, p)
}

// TapMain runs the tap and returns its exit code. Long: the relay of both
// directions with its hold and progress rules reads best in one place.
func TapMain() int {
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "tap:", err)
		return 1
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(self), "tap.json"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tap:", err)
		return 1
	}
	var c tapConfig
	if err := json.Unmarshal(b, &c); err != nil {
		fmt.Fprintln(os.Stderr, "tap:", err)
		return 1
	}
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "config" {
		out, err := exec.Command(c.Real, args...).Output()
		real, _ := filepath.EvalSymlinks(c.Real)
		os.Stdout.Write(bytes.ReplaceAll(out, []byte(real), []byte(self)))
		if err != nil {
			return 1
		}
		return 0
	}
	logf, err := os.OpenFile(c.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tap:", err)
		return 1
	}
	defer logf.Close()
	var mu sync.Mutex
	record := func(dir string, line []byte) {
		msg := json.RawMessage(bytes.TrimSpace(line))
		if !json.Valid(msg) {
			q, _ := json.Marshal(string(line))
			msg = q
		}
		l, _ := json.Marshal(TapLine{Time: time.Now(), Dir: dir, PID: os.Getpid(), Msg: msg})
		mu.Lock()
		logf.Write(append(l, '\n'))
		mu.Unlock()
	}
	record("start", []byte(fmt.Sprintf("%q", strings.Join(args, " "))))
	var outMu sync.Mutex
	write := func(line []byte) error {
		outMu.Lock()
		defer outMu.Unlock()
		_, err := os.Stdout.Write(line)
		return err
	}
	h := &holder{cfg: c, write: write, record: record}
	cmd := exec.Command(c.Real, args...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return 1
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "tap:", err)
		return 1
	}
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for s := range sig {
			record("signal", []byte(fmt.Sprintf("%q", s.String())))
			_ = cmd.Process.Signal(s)
		}
	}()
	go func() {
		r := bufio.NewReaderSize(os.Stdin, 1<<16)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				record("in", line)
				h.in(line)
				if _, werr := in.Write(line); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		record("eof", []byte(`"stdin closed"`))
		in.Close()
	}()
	r := bufio.NewReaderSize(out, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			record("out", line)
			if h.held(line) {
				continue
			}
			if werr := write(line); werr != nil {
				break
			}
		}
		if err != nil {
			if err != io.EOF {
				record("error", []byte(fmt.Sprintf("%q", err.Error())))
			}
			break
		}
	}
	err = cmd.Wait()
	h.drain()
	record("exit", []byte(fmt.Sprintf("%q", fmt.Sprint(err))))
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return 0
}

// holder holds the answer to a wait call (tapConfig.Hold).
type holder struct {
	cfg    tapConfig
	write  func([]byte) error
	record func(dir string, line []byte)
	mu     sync.Mutex
	id     string
	token  json.RawMessage
	start  time.Time
	cancel chan struct{}
	wg     sync.WaitGroup
}

// in notes a wait call from the host and its cancellation.
func (h *holder) in(line []byte) {
	if h.cfg.Hold <= 0 {
		return
	}
	var m rpcMsg
	if json.Unmarshal(line, &m) != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch m.Method {
	case "tools/call":
		if ok, _ := waitCall(m.Params); ok && h.id == "" {
			var p struct {
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			_ = json.Unmarshal(m.Params, &p)
			h.id, h.token, h.start, h.cancel = string(m.ID), p.Meta.ProgressToken, time.Now(), make(chan struct{})
		}
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && h.id != "" && string(p.RequestID) == h.id && h.cancel != nil {
			close(h.cancel)
			h.cancel = nil
		}
	}
}

// held reports whether line is the answer to the wait call, which it then
// holds.
func (h *holder) held(line []byte) bool {
	if h.cfg.Hold <= 0 {
		return false
	}
	var m rpcMsg
	if json.Unmarshal(line, &m) != nil || m.Method != "" {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.id == "" || string(m.ID) != h.id || h.cancel == nil {
		return false
	}
	cancel, start, token := h.cancel, h.start, h.token
	h.id = "done"
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.record("hold", []byte(`"answer held"`))
		until := time.NewTimer(time.Until(start.Add(h.cfg.Hold)))
		defer until.Stop()
		tick := time.NewTicker(tapProgressEvery)
		defer tick.Stop()
		for {
			select {
			case <-cancel:
				h.record("hold", []byte(`"cancelled: answer dropped"`))
				return
			case <-until.C:
				h.record("hold", []byte(`"answer released"`))
				_ = h.write(line)
				return
			case now := <-tick.C:
				if !h.cfg.Progress || len(token) == 0 || string(token) == "null" {
					continue
				}
				n, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
					"params": map[string]any{"progressToken": token, "progress": now.Sub(start).Seconds(), "message": "waiting for the outcome"}})
				h.record("out", n)
				_ = h.write(append(n, '\n'))
			}
		}
	}()
	return true
}

// drain waits for a held answer to be released or dropped.
func (h *holder) drain() { h.wg.Wait() }

// ReadTap reads a tap's log.
func ReadTap(path string) ([]TapLine, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []TapLine
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var t TapLine
		if err := json.Unmarshal(l, &t); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		out = append(out, t)
	}
	return out, nil
}
