package socket_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/herdr-link/herdr-link/socket"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// A Client needs only the socket's path; the zero value resolves it from
// the environment as Herdr's CLI does (HERDR_SOCKET_PATH, HERDR_SESSION,
// the default session).
func ExampleClient() {
	srv := sockettest.NewServer(sockettest.DefaultWorld())
	defer srv.Close()

	c := &socket.Client{Path: srv.Path()}
	ctx := context.Background()
	agents, err := c.AgentList(ctx)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, a := range agents {
		name := "(unnamed)"
		if a.Name != nil {
			name = *a.Name
		}
		fmt.Println(a.PaneID, name, a.AgentStatus)
	}
	// Herdr's refusals are *socket.Error values, matched by code.
	_, err = c.AgentGet(ctx, "nobody")
	fmt.Println(errors.Is(err, socket.ErrAgentNotFound))
	// Output:
	// w1:p1 brain working
	// w1:p2 reviewer idle
	// w1:p3 (unnamed) idle
	// w1:p5 writer done
	// w2:p1 ops blocked
	// true
}
