package sockettest

import (
	"fmt"
	"net"
	"time"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest/herdrstate"
	"github.com/herdr-link/herdr-link/socket/sockettest/reqcheck"
)

// subscribe serves events.subscribe: the world starts the subscriptions
// (or answers a probe's error), the server answers subscription_started,
// then writes what each tick's poll finds until the client goes away or
// the server closes.
func (s *Server) subscribe(c net.Conn, req reqcheck.Request) {
	var p schema.EventsSubscribeParams
	_ = jsonx.Unmarshal(req.Params, &p)
	sub, perr := s.World.Subscribe(p)
	if perr != nil {
		s.reply(c, errorLine(fmt.Sprintf("%s:sub:%d:probe", req.ID, perr.Index), perr.Code, perr.Message))
		return
	}
	s.reply(c, resultLine(req.ID, schema.ResultSubscriptionStarted{Type: schema.ResultTypeSubscriptionStarted}))
	gone := s.watchGone(c)
	ticker := time.NewTicker(s.Tick)
	defer ticker.Stop()
	for {
		select {
		case <-gone:
			return
		case <-s.done:
			return
		case <-ticker.C:
		}
		for _, l := range sub.Poll() {
			s.check(l)
			_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Write(append(l, '\n')); err != nil {
				return
			}
		}
		if sub.Lost() {
			// 0.9.2: the error under the subscribe request's id, then the
			// connection closes.
			_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			s.reply(c, errorLine(req.ID, "events_lost", herdrstate.MessageEventsLost))
			return
		}
	}
}
