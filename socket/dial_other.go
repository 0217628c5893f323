//go:build !unix

package socket

import (
	"context"
	"net"
)

func dialUnix(context.Context, string) (net.Conn, error) { return nil, ErrPlatform }
