package socket_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// Each environment failure gets operator text that names its cause and
// its fix.
func TestEnvironmentFailuresNamed(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	long := "/tmp/" + strings.Repeat("d", 120) + "/herdr.sock"
	failDial := func(errno syscall.Errno) func(context.Context, string) (net.Conn, error) {
		return func(context.Context, string) (net.Conn, error) {
			return nil, &net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", errno)}
		}
	}
	srv := simtest.New(t, nil)
	tests := []struct {
		name   string
		client *socket.Client
		params any
		is     error
		want   []string
	}{
		{"EACCES", &socket.Client{Path: "/run/x/herdr.sock", Dial: failDial(syscall.EACCES)}, nil, socket.ErrConnection,
			[]string{"permission denied", "run herdr-link as the user that runs Herdr"}},
		{"EMFILE", &socket.Client{Path: "/run/x/herdr.sock", Dial: failDial(syscall.EMFILE)}, nil, socket.ErrConnection,
			[]string{"too many open files", "ulimit -n"}},
		{"path over sun_path", &socket.Client{Path: long}, nil, socket.ErrConnection,
			[]string{"over the kernel's limit of", "shorter"}},
		{"directory", &socket.Client{Path: dir}, nil, socket.ErrConnection,
			[]string{"a directory, not a socket", "HERDR_SOCKET_PATH"}},
		{"regular file", &socket.Client{Path: file}, nil, socket.ErrConnection,
			[]string{"a regular file, not a socket", "remove the file"}},
		{"oversize request", &socket.Client{Path: srv.Path()}, map[string]string{"text": strings.Repeat("\x01", socket.MaxRequestBytes/4)}, socket.ErrRequestTooLarge,
			[]string{"over Herdr's limit of 1048576 bytes", "nothing was sent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.client.Protocol = socket.ProtocolOff
			err := tt.client.Call(t.Context(), "agent.prompt", tt.params, nil)
			if !errors.Is(err, tt.is) {
				t.Fatalf("err %v, want %v", err, tt.is)
			}
			if strings.Contains(err.Error(), "is the Herdr server running") {
				t.Errorf("generic text: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) && !strings.Contains(socket.Fix(err), w) {
					t.Errorf("%q lacks %q (fix %q)", err, w, socket.Fix(err))
				}
			}
			if socket.Fix(err) == "" {
				t.Errorf("no fix for %v", err)
			}
		})
	}
	// The oversize request never reached Herdr.
	for _, m := range srv.Methods() {
		if m == "agent.prompt" {
			t.Fatal("an oversize request was sent")
		}
	}
}
