package socket

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// MaxRequestBytes is Herdr's limit on one request line, newline not
// counted (upstream MAX_INITIAL_REQUEST_BYTES). Herdr closes the
// connection without an answer for a longer line, so a Client refuses to
// send one ([ErrRequestTooLarge]).
const MaxRequestBytes = 1 << 20

// maxSocketPath is the longest Unix socket path the kernel accepts (the
// size of sockaddr_un's sun_path less its terminating NUL: 107 on Linux,
// 103 on macOS).
var maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// ErrRequestTooLarge: the request line is longer than Herdr accepts
// ([MaxRequestBytes]); it was not sent. It is not a transport failure.
var ErrRequestTooLarge = errors.New("request too large for herdr")

// EnvError is a failure of this machine's environment to reach Herdr's
// socket: a permission, a file-descriptor limit, a path the kernel cannot
// use, or something other than a socket at the path. Its text names the
// cause and the fix, for operators (logs, the probe). It wraps
// [ErrConnection] and the system error.
type EnvError struct {
	Path  string
	Cause string // what is wrong, in words
	Fix   string // what the operator can do
	Err   error  // the system error, when there is one
}

func (e *EnvError) Error() string {
	return fmt.Sprintf("herdr socket %s: %s; fix: %s", e.Path, e.Cause, e.Fix)
}

// Unwrap returns ErrConnection and the system error.
func (e *EnvError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrConnection}
	}
	return []error{ErrConnection, e.Err}
}

// checkPath refuses a socket path the kernel cannot connect to.
func checkPath(path string) error {
	if len(path) > maxSocketPath {
		return &EnvError{Path: path, Err: syscall.EINVAL,
			Cause: fmt.Sprintf("the path is %d bytes, over the kernel's limit of %d bytes for a Unix socket path", len(path), maxSocketPath),
			Fix:   "use a shorter path: set HERDR_SOCKET_PATH, or XDG_CONFIG_HOME for the default socket, to a shorter directory (Herdr must listen there too)"}
	}
	return nil
}

// diagnoseDial explains a dial error whose cause lies in the environment;
// it returns nil for the other errors (no server, timeouts).
func diagnoseDial(path string, err error) error {
	switch {
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return &EnvError{Path: path, Err: err,
			Cause: fmt.Sprintf("permission denied (uid %d may not connect to the socket or search a directory above it)", os.Getuid()),
			Fix:   "run herdr-link as the user that runs Herdr (Herdr makes its socket 0600), or fix the permissions of the socket's directories"}
	case errors.Is(err, syscall.EMFILE):
		return &EnvError{Path: path, Err: err,
			Cause: "herdr-link has too many open files (EMFILE): its file-descriptor limit is used up",
			Fix:   "raise the open-file limit of the process that starts herdr-link (ulimit -n), or find what holds herdr-link's descriptors"}
	case errors.Is(err, syscall.ENFILE):
		return &EnvError{Path: path, Err: err,
			Cause: "the system has too many open files (ENFILE)",
			Fix:   "raise the system-wide file limit (fs.file-max) or close files elsewhere"}
	case errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.EINVAL) && len(path) > maxSocketPath:
		return checkPath(path)
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOTSOCK):
		// Connecting to a directory or a regular file is refused like a
		// socket nobody listens on; say which it is.
		fi, serr := os.Stat(path)
		switch {
		case serr != nil:
		case fi.IsDir():
			return &EnvError{Path: path, Err: err,
				Cause: "this is a directory, not a socket",
				Fix:   "point HERDR_SOCKET_PATH at Herdr's socket file (herdr.sock inside it?), or unset it to use the session's socket"}
		case fi.Mode().IsRegular():
			return &EnvError{Path: path, Err: err,
				Cause: "this is a regular file, not a socket",
				Fix:   "HERDR_SOCKET_PATH names the wrong file, or a stale file blocks Herdr's socket: fix the variable, or remove the file and restart Herdr"}
		}
	}
	return nil
}

// DiagnoseDial returns err explained as an [*EnvError] when its cause lies
// in the environment (see [EnvError]), else err itself. For tools that
// dial the socket themselves (the probe).
func DiagnoseDial(path string, err error) error {
	if err == nil {
		return nil
	}
	if pe := checkPath(path); pe != nil {
		return pe
	}
	if de := diagnoseDial(path, err); de != nil {
		return de
	}
	return err
}

// tooLarge is the error for a request line of n bytes.
func tooLarge(method string, n int) error {
	return fmt.Errorf("socket: %s: %w: the request line is %d bytes, over Herdr's limit of %d bytes (Herdr would close the connection without an answer); nothing was sent",
		method, ErrRequestTooLarge, n, MaxRequestBytes)
}

// Fix returns the operator's fix for err when the socket package knows one
// (an [*EnvError], an [*UnavailableError], an oversize request or
// response), or "".
func Fix(err error) string {
	var ee *EnvError
	var ue *UnavailableError
	switch {
	case errors.As(err, &ee):
		return ee.Fix
	case errors.As(err, &ue):
		return fmt.Sprintf("start or attach Herdr: run `%s` (it creates %s)", ue.Hint, ue.Path)
	case errors.Is(err, ErrRequestTooLarge):
		return "the request is larger than Herdr accepts; for a send, shorten the message (control characters count six times after JSON escaping)"
	case errors.Is(err, ErrResponseTooLarge):
		return "Herdr's answer is larger than herdr-link accepts for this method; if the session really has that many panes, report it"
	}
	return ""
}
