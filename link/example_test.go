package link_test

import (
	"context"
	"fmt"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// A Link is the agent of one pane; every call resolves self and peers from
// Herdr afresh. Peers lists the named agents of the caller's workspace
// only: ops, in another workspace, is not there.
func ExampleLink_Peers() {
	srv := sockettest.NewServer(sockettest.DefaultWorld())
	defer srv.Close()
	l, err := link.New(link.Config{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: "w1:p1"})
	if err != nil {
		fmt.Println(err)
		return
	}

	r, err := l.Peers(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("self:", r.Self.Name, r.Self.State)
	for _, p := range r.Peers {
		fmt.Println("peer:", p.Name, p.State)
	}
	// Output:
	// self: brain working
	// peer: reviewer idle
	// peer: writer done
}

// Extract finds the herdr-link/1 envelope in text a model received.
func ExampleExtract() {
	e := link.Envelope{Protocol: link.Protocol, ID: "hl_mx3h9pb9_k4okft73", From: "brain", To: "reviewer", Message: "Please review the diff."}
	text, _ := link.Wrap(e)
	got, ok := link.Extract(text)
	fmt.Println(ok, got.From, got.Message)
	// Output:
	// true brain Please review the diff.
}
