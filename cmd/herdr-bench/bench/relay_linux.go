//go:build linux

package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/herdr-link/herdr-link/internal/cliflag"
)

// benchRelay is the hidden `relay` subcommand: the bench's floor.
// It is the least a stdio server in front of Herdr's socket can do: read a
// line from stdin, pass it to the socket on a new connection, write the
// answer line to stdout — with plain blocking system calls, no JSON, no
// goroutines. A line may hold several requests separated by tabs (JSON
// text never contains a raw tab); they go out one after the other on
// connections of their own and their answers come back joined by tabs on
// one line. It ends at EOF on stdin.
func benchRelay(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := cliflag.New("herdr-bench relay -socket PATH", "The bench's floor (internal): relays each stdin line to Herdr's socket and writes the answer line to stdout.", stderr)
	path := fs.String("socket", os.Getenv("HERDR_SOCKET_PATH"), "Herdr socket path")
	timeout := fs.Duration("timeout", 30*time.Second, "send and receive timeout of each socket call")
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	in, ok1 := stdin.(*os.File)
	out, ok2 := stdout.(*os.File)
	if !ok1 || !ok2 || *path == "" {
		fmt.Fprintln(stderr, "herdr-bench relay: needs -socket and stdin/stdout as files")
		return 2
	}
	// Fd puts the descriptors in blocking mode: reads and writes are
	// plain system calls, as in the simplest possible relay.
	r := &relay{in: int(in.Fd()), out: int(out.Fd()), path: *path, timeout: *timeout}
	if err := r.run(); err != nil {
		fmt.Fprintln(stderr, "herdr-bench relay:", err)
		return 1
	}
	return 0
}

type relay struct {
	in, out int
	path    string
	timeout time.Duration
	buf     []byte // stdin bytes not consumed yet
	resp    []byte // one socket answer
	line    []byte // the answer line being built
}

func (r *relay) run() error {
	chunk := make([]byte, 64<<10)
	for {
		i := bytes.IndexByte(r.buf, '\n')
		if i < 0 {
			n, err := retryEINTR(func() (int, error) { return syscall.Read(r.in, chunk) })
			if err != nil {
				return fmt.Errorf("read stdin: %w", err)
			}
			if n == 0 {
				return nil // EOF; an unterminated last line is dropped
			}
			if len(r.buf)+n > relayMaxLine {
				return fmt.Errorf("read stdin: a line longer than %d bytes", relayMaxLine)
			}
			r.buf = append(r.buf, chunk[:n]...)
			continue
		}
		req := r.buf[:i]
		r.line = r.line[:0]
		for k, part := range bytes.Split(req, []byte{'\t'}) {
			resp, err := r.roundTrip(part)
			if err != nil {
				return err
			}
			if k > 0 {
				r.line = append(r.line, '\t')
			}
			r.line = append(r.line, resp...)
		}
		r.line = append(r.line, '\n')
		if err := writeAll(r.out, r.line); err != nil {
			return fmt.Errorf("write stdout: %w", err)
		}
		r.buf = r.buf[:copy(r.buf, r.buf[i+1:])]
	}
}

// roundTrip sends one request line on a new connection and returns the
// answer line without its newline.
func (r *relay) roundTrip(req []byte) ([]byte, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	defer syscall.Close(fd)
	tv := syscall.NsecToTimeval(r.timeout.Nanoseconds())
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
	if _, err := retryEINTR(func() (int, error) { return 0, syscall.Connect(fd, &syscall.SockaddrUnix{Name: r.path}) }); err != nil {
		return nil, fmt.Errorf("connect %s: %w", r.path, err)
	}
	if err := writeAll(fd, append(req, '\n')); err != nil {
		return nil, fmt.Errorf("send: %w", err)
	}
	if r.resp == nil {
		r.resp = make([]byte, 0, 64<<10)
	}
	r.resp = r.resp[:0]
	for {
		if len(r.resp) > relayMaxLine {
			return nil, fmt.Errorf("receive: an answer longer than %d bytes", relayMaxLine)
		}
		if len(r.resp) == cap(r.resp) {
			r.resp = append(r.resp, 0)[:len(r.resp)]
		}
		n, err := retryEINTR(func() (int, error) {
			return syscall.Read(fd, r.resp[len(r.resp):min(cap(r.resp), relayMaxLine+1)])
		})
		if err != nil {
			return nil, fmt.Errorf("receive: %w", err)
		}
		if n == 0 {
			return nil, errors.New("receive: the socket closed before a whole line")
		}
		start := len(r.resp)
		r.resp = r.resp[:start+n]
		if i := bytes.IndexByte(r.resp[start:], '\n'); i >= 0 {
			return r.resp[:start+i], nil
		}
	}
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := retryEINTR(func() (int, error) { return syscall.Write(fd, b) })
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// retryEINTR repeats a system call interrupted by a signal (the Go
// runtime's preemption signals among them).
func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// relayMaxLine bounds one stdin line and one socket answer.
const relayMaxLine = 64 << 20
