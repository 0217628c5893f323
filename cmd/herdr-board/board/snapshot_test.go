package board

import (
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/internal/outbox"
)

func TestHeldWhy(t *testing.T) {
	held := outbox.Entry{State: outbox.StateHeld}
	for _, c := range []struct {
		name   string
		e      outbox.Entry
		target *AgentRow
		alive  bool
		want   string
	}{
		{"working", held, &AgentRow{Status: "working"}, true, "target working"},
		{"blocked, sender gone", held, &AgentRow{Status: "blocked"}, false, "target blocked; sender's server gone (a hook or any server moves it)"},
		{"idle", held, &AgentRow{Status: "idle"}, true, "target ready, its turn is next"},
		{"done", held, &AgentRow{Status: "done"}, true, "target ready, its turn is next"},
		{"no target", held, nil, true, "target not found"},
		{"being typed", outbox.Entry{State: outbox.StateTyping}, &AgentRow{Status: "idle"}, false, "being typed"},
	} {
		if got := heldWhy(c.e, c.target, c.alive); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestAge(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"}, {0, "0s"}, {59 * time.Second, "59s"}, {time.Minute, "1m"},
		{59*time.Minute + 59*time.Second, "59m"}, {3 * time.Hour, "3h"},
	} {
		if got := age(c.d); got != c.want {
			t.Errorf("age(%v): got %q, want %q", c.d, got, c.want)
		}
	}
}
