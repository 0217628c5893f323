package receiver

import "time"

// What the world asks of a model besides the [Receiver] methods. Like
// those, they are called with the world's lock held.

// SetBehaviour changes how the model reacts from now on.
func (m *Model) SetBehaviour(b Behaviour) { m.b = b }

// EndTurnAfter ends the turn under way d from now (an agent a world file
// starts working, with turn_ends_ms).
func (m *Model) EndTurnAfter(d time.Duration) { m.startTurnTimer(d) }

// Interrupts is how many turns lost their partial answer to a submission
// that steered them (codex while working).
func (m *Model) Interrupts() int { return m.interrup }

// Composer returns what the model holds unsent: the composer, and the
// input queued until its turn ends, each as the model would get it.
func (m *Model) Composer() (composer, queued string) {
	return m.k.merge(m.composer), m.k.merge(m.queue)
}
