//go:build !unix

package bins

import "errors"

// errNoLock is returned where file locks are not available (the e2e
// tests run on Unix).
var errNoLock = errors.New("bins: no file lock on this system")

func lock(string) (func(), error) { return nil, errNoLock }
