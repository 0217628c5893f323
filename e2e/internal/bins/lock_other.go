//go:build !unix

package bins

func lock(string) (func(), error) { return nil, errNoLock }
