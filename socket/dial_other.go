//go:build !unix

package socket

import (
	"context"
	"errors"
	"net"
)

// ErrPlatform is returned on systems where herdr-link has no transport to
// Herdr yet.
var ErrPlatform = errors.New("socket: this platform's transport to Herdr is not supported yet (Herdr runs on Linux and macOS)")

func dialUnix(context.Context, string) (net.Conn, error) { return nil, ErrPlatform }
