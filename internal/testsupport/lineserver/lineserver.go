// Package lineserver is a bare Unix-socket server for tests and
// benchmarks of socket clients: it knows nothing of Herdr, only the
// exchange of one line per connection.
package lineserver

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"sync"
)

// Server is a bare Unix-socket server: it reads each connection's
// first line and answers with whatever reply returns for it (written as
// is; nil closes without a reply). Use it for what a faithful Herdr never
// sends (garbage, foreign ids, truncated lines) and as the floor of a
// socket round trip. Create it with [New]; Close it when done.
type Server struct {
	ln   net.Listener
	dir  string
	path string
	wg   sync.WaitGroup
}

// New listens on a socket in a new temporary directory.
func New(reply func(line []byte) []byte) (*Server, error) {
	dir, err := os.MkdirTemp("", "hl")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{ln: ln, dir: dir, path: path}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				line, err := bufio.NewReader(c).ReadSlice('\n')
				if err != nil && len(line) == 0 {
					return
				}
				if out := reply(line); out != nil {
					_, _ = c.Write(out)
				}
			}()
		}
	}()
	return s, nil
}

// Path is the socket path.
func (s *Server) Path() string { return s.path }

// Close stops the server, waits for its connections and removes the socket.
func (s *Server) Close() {
	s.ln.Close()
	s.wg.Wait()
	os.RemoveAll(s.dir)
}
