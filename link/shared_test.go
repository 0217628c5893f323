package link_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// TestListAgentsOutlivesTheBuffer: the agents' strings are parts of one
// copy of the answer (agentList.SharesAnswer), never of the client's
// pooled read buffer, so a list stays as it was read while later calls
// reuse that buffer for other answers.
func TestListAgentsOutlivesTheBuffer(t *testing.T) {
	w, err := sockettest.GeneratedWorld(40, 2)
	if err != nil {
		t.Fatal(err)
	}
	srv := sockettest.NewServer(w)
	t.Cleanup(srv.Close)
	h := link.SocketHerdr{Client: srv.Client()}
	ctx := t.Context()
	first, err := h.ListAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deep := make([]link.Agent, len(first))
	for i, a := range first {
		deep[i] = link.Agent{Name: strings.Clone(a.Name), Status: strings.Clone(a.Status), WorkspaceID: strings.Clone(a.WorkspaceID),
			PaneID: strings.Clone(a.PaneID), TerminalID: strings.Clone(a.TerminalID), Kind: strings.Clone(a.Kind), Seq: a.Seq,
			CompletionSeq: a.CompletionSeq}
	}
	// Same-length names, so the next answers land on the same bytes.
	for round := range 3 {
		for _, a := range first {
			if !link.ValidName(a.Name) {
				continue
			}
			if _, err := h.Rename(ctx, a.PaneID, string(rune('p'+round))+a.Name[1:]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := h.ListAgents(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(first, deep) {
		t.Fatalf("a list changed after later calls:\n got %v\nwant %v", first, deep)
	}
}
