//go:build unix

package herdrbench

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// TestBenchRelay runs the bench's floor process against the simulator:
// each stdin line is relayed, tab-separated requests one after the other,
// and the answers come back on one line in order.
func TestBenchRelay(t *testing.T) {
	srv := simtest.New(t, nil)
	cmd := exec.Command(bench, "relay", "-socket", srv.Path())
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(outPipe)
	tests := []struct {
		line string
		want []string // substrings of each answer part, in order
	}{
		{`{"id":"a","method":"ping","params":{}}`, []string{`"id":"a"`}},
		{`{"id":"b","method":"agent.list","params":{}}` + "\t" + `{"id":"c","method":"ping","params":{}}`, []string{`"type":"agent_list"`, `"id":"c"`}},
		{`{"id":"d","method":"agent.get","params":{"target":"nobody"}}`, []string{`"error"`}},
		{`not json`, []string{`"error"`}},
	}
	for _, tt := range tests {
		if _, err := io.WriteString(in, tt.line+"\n"); err != nil {
			t.Fatal(err)
		}
		got, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("%q: %v (stderr %s)", tt.line, err, stderr.String())
		}
		parts := strings.Split(strings.TrimSuffix(got, "\n"), "\t")
		if len(parts) != len(tt.want) {
			t.Fatalf("%q: %d parts in %q", tt.line, len(parts), got)
		}
		for i, w := range tt.want {
			if !strings.Contains(parts[i], w) {
				t.Errorf("%q: part %d = %q, want %q in it", tt.line, i, parts[i], w)
			}
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("relay at EOF: %v (stderr %s)", err, stderr.String())
	}
	if n := len(srv.Requests()); n != 5 {
		t.Errorf("%d socket requests, want 5", n)
	}
}

func TestBenchRelayFailures(t *testing.T) {
	tests := []struct {
		args   []string
		stdin  string
		code   int
		stderr string
	}{
		{args: []string{"-socket", ""}, code: 2, stderr: "needs -socket"},
		{args: []string{"-socket", "/nonexistent/herdr.sock"}, stdin: "{}\n", code: 1, stderr: "connect /nonexistent/herdr.sock"},
		{args: []string{"-socket", "/nonexistent/herdr.sock"}, stdin: "", code: 0},
	}
	for _, tt := range tests {
		cmd := exec.Command(bench, append([]string{"relay"}, tt.args...)...)
		cmd.Env = []string{}
		cmd.Stdin = strings.NewReader(tt.stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", tt.args, code, stderr.String(), tt.code, tt.stderr)
		}
	}
}
