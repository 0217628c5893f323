//go:build unix

package socket

import (
	"context"
	"net"
)

// dialUnix is the default Dial: Herdr's Unix socket.
func dialUnix(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", path)
}
