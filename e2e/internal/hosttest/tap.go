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
}

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
func InstallTap(dir, real, log string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b, err := json.Marshal(tapConfig{Real: real, Log: log})
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

// TapMain runs the tap and returns its exit code.
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
			if _, werr := os.Stdout.Write(line); werr != nil {
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
	record("exit", []byte(fmt.Sprintf("%q", fmt.Sprint(err))))
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return 0
}

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
