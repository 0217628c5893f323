package link_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// Diagnose lists exactly what Peers lists, for every caller of the world,
// and counts what it leaves out.
func TestDiagnoseAgreesWithPeers(t *testing.T) {
	srv := simtest.New(t, sockettest.DefaultWorld())
	ctx := t.Context()
	tests := []struct {
		pane               string
		self               string // "" : no valid name
		unnamed, elsewhere int
	}{
		{"w1:p1", "brain", 1, 1},
		{"w1:p2", "reviewer", 1, 1},
		{"w2:p1", "ops", 0, 4},
	}
	for _, tt := range tests {
		l := mustLink(t, link.Config{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: tt.pane})
		d, err := l.Diagnose(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tt.pane, err)
		}
		if d.Self == nil || d.Self.Name != tt.self || d.PaneID != tt.pane || d.Unnamed != tt.unnamed || d.Elsewhere != tt.elsewhere {
			type seen struct {
				Self, PaneID       string
				Unnamed, Elsewhere int
			}
			got := seen{Self: "<nil>", PaneID: d.PaneID, Unnamed: d.Unnamed, Elsewhere: d.Elsewhere}
			if d.Self != nil {
				got.Self = d.Self.Name
			}
			if diff := cmp.Diff(seen{tt.self, tt.pane, tt.unnamed, tt.elsewhere}, got); diff != "" {
				t.Errorf("%s: Diagnose mismatch (-want +got):\n%s", tt.pane, diff)
			}
		}
		r, err := l.Peers(ctx)
		if err != nil {
			t.Fatalf("%s: peers: %v", tt.pane, err)
		}
		if len(r.Peers) != len(d.Peers) {
			t.Fatalf("%s: peers %v, diagnosis %v", tt.pane, r.Peers, d.Peers)
		}
		for i := range r.Peers {
			if r.Peers[i].Name != d.Peers[i].Name || r.Peers[i].State != link.State(d.Peers[i].Status) {
				t.Errorf("%s: peer %d: %v vs %v", tt.pane, i, r.Peers[i], d.Peers[i])
			}
		}
	}
	// An unknown pane is the operations' NOT_IN_HERDR.
	l := mustLink(t, link.Config{Herdr: link.SocketHerdr{Client: srv.Client()}, PaneID: "w9:p9"})
	if _, err := l.Diagnose(ctx); err == nil || !isCode(err, link.NotInHerdr) {
		t.Errorf("unknown pane: %v", err)
	}
}

func isCode(err error, c link.Code) bool {
	le, ok := err.(*link.Error)
	return ok && le.Code == c
}
