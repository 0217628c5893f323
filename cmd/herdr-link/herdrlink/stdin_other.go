//go:build !unix

package herdrlink

import "io"

func pollable(r io.Reader) (io.Reader, func()) { return r, func() {} }
