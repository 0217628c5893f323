package sockettest_test

import (
	"context"
	"fmt"

	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// A Server serves a World on a real Unix socket; the test drives the world
// directly and injects faults per method.
func ExampleServer() {
	w, err := sockettest.ParseWorld([]byte(`{"workspaces":[{"id":"w1","tabs":[{"id":"w1:t1","panes":[
		{"id":"w1:p1","agent":{"kind":"claude","name":"brain","status":"idle"}}]}]}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := sockettest.NewServer(w)
	defer srv.Close()
	c := srv.Client()
	ctx := context.Background()

	_ = srv.World.SetStatus("w1:p1", "working")
	a, _ := c.AgentGet(ctx, "brain")
	fmt.Println(*a.Name, a.AgentStatus)

	srv.SetFault(schema.MethodAgentGet, sockettest.Fault{Error: &schema.ErrorBody{Code: "internal_error", Message: "boom"}})
	_, err = c.AgentGet(ctx, "brain")
	fmt.Println(err)
	// Output:
	// brain working
	// herdr agent.get: internal_error: boom
}
