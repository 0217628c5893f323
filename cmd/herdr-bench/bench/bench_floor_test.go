package bench

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestShuffledRoutes: every round is a permutation of the routes, and over
// rounds each route gets to go first (no fixed order).
func TestShuffledRoutes(t *testing.T) {
	routes := []*route{{name: "socket"}, {name: "mcp"}, {name: "floor"}}
	rng := rand.New(rand.NewPCG(1, 2))
	first := map[string]int{}
	for i := 0; i < 300; i++ {
		got := shuffled(rng, routes)
		seen := map[string]bool{}
		for _, r := range got {
			seen[r.name] = true
		}
		if len(got) != 3 || len(seen) != 3 {
			t.Fatalf("round %d: %v is not a permutation", i, got)
		}
		first[got[0].name]++
	}
	for _, r := range routes {
		if first[r.name] < 50 {
			t.Errorf("%s first in %d of 300 rounds", r.name, first[r.name])
		}
	}
	if routes[0].name != "socket" || routes[2].name != "floor" {
		t.Error("shuffled changed its input")
	}
}

func TestFloorRequest(t *testing.T) {
	if got := string(floorRequest("peers", 7, "")); got != `{"id":"floor:7","method":"agent.list","params":{}}` {
		t.Errorf("peers: %s", got)
	}
	parts := strings.Split(string(floorRequest("send", 8, "bench-peer")), "\t")
	if len(parts) != 2 || !strings.Contains(parts[1], `"method":"agent.prompt"`) || !strings.Contains(parts[1], `"target":"bench-peer"`) || strings.ContainsAny(parts[1], "\n\t") {
		t.Errorf("send: %q", parts)
	}
}
