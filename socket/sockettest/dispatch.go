package sockettest

import (
	"context"
	"net"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest/herdrstate"
	"github.com/herdr-link/herdr-link/socket/sockettest/reqcheck"
)

// dispatch sends a checked request where it is answered: events.subscribe
// to the subscription loop, everything else to respond.
func (s *Server) dispatch(c net.Conn, req reqcheck.Request, extra bool) {
	if extra {
		c = strayConn{c}
	}
	switch req.Method {
	case schema.MethodEventsSubscribe:
		s.subscribe(c, req)
		return
	}
	if resp := s.respond(c, req); resp != nil {
		s.reply(c, resp)
	}
}

// respond computes the response line of an ordinary or waiting method;
// nil means "write nothing" (client gone).
func (s *Server) respond(c net.Conn, req reqcheck.Request) []byte {
	if req.Method == schema.MethodPing {
		if line := s.pongLine(req.ID); line != nil {
			return line
		}
		return resultLine(req.ID, schema.ResultPong{Type: schema.ResultTypePong, Version: s.Version, Protocol: s.protocol.Load(), Capabilities: s.Capabilities})
	}
	if req.Method == schema.MethodServerStop {
		s.stopping.Store(true)
		return resultLine(req.ID, schema.ResultOk{Type: schema.ResultTypeOk})
	}
	if s.stopping.Load() {
		return errorLine(req.ID, "server_unavailable", "server is shutting down")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if herdrstate.Waits(req.Method, req.Params) {
		gone := s.watchGone(c)
		go func() {
			select {
			case <-gone:
			case <-s.done:
			case <-ctx.Done():
				return
			}
			cancel()
		}()
	}
	res, herr := s.World.Handle(ctx, s.env(), req.Method, req.Params)
	if ctx.Err() != nil {
		return nil // the client left: Herdr abandons the wait silently
	}
	if herr != nil {
		return errorLine(req.ID, herr.Code, herr.Message)
	}
	return resultLine(req.ID, res)
}

// env is what a request sees of the server.
func (s *Server) env() *herdrstate.Env {
	return &herdrstate.Env{Version: s.Version, Protocol: s.protocol.Load(), Tick: s.Tick, SubmitDelay: s.SubmitDelay,
		EffectTimeout: s.EffectTimeout, Done: s.done, Waiting: &s.waiting}
}

// Implemented lists the methods the simulator implements; every other
// method of the schema answers not_implemented_in_simulator.
func Implemented() []string {
	return append([]string{schema.MethodPing, schema.MethodServerStop, schema.MethodEventsSubscribe}, herdrstate.Methods()...)
}
