//go:build !unix

package limitedtest

import "errors"

func mkfifo(string) error { return errors.New("named pipes are Unix only") }

func unblock(string) {}
