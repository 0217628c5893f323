package board

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/herdr-link/herdr-link/internal/outbox"
	"github.com/herdr-link/herdr-link/internal/panelock"
)

// refreshEvery is the spacing of the board's reads of the store (held
// messages and requests change without a Herdr event); Herdr's status
// events refresh it sooner.
const refreshEvery = time.Second

// cancelWait is how long a cancellation waits for the target's delivery
// lock (a delivery under way keeps it).
const cancelWait = 5 * time.Second

// model is the board's Bubble Tea model.
type model struct {
	src     Source
	locker  *panelock.Locker
	events  <-chan struct{} // a value per Herdr status change (nil: none)
	snap    Snapshot
	ui      UI
	width   int
	pending string // the id of the held message the question is about
}

type snapMsg Snapshot
type tickMsg struct{}
type eventMsg struct{}
type cancelledMsg string

func newModel(src Source, locker *panelock.Locker, events <-chan struct{}) model {
	return model{src: src, locker: locker, events: events, ui: UI{Selected: -1, Keys: true}}
}

func (m model) collect() tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return snapMsg(m.src.Collect(ctx))
	}
}

func (m model) waitEvent() tea.Cmd {
	if m.events == nil {
		return nil
	}
	return func() tea.Msg {
		if _, ok := <-m.events; !ok {
			return nil
		}
		return eventMsg{}
	}
}

func tick() tea.Cmd { return tea.Tick(refreshEvery, func(time.Time) tea.Msg { return tickMsg{} }) }

func (m model) Init() tea.Cmd { return tea.Batch(m.collect(), tick(), m.waitEvent()) }

func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width = msg.Width
	case snapMsg:
		m.snap = Snapshot(msg)
		m.clamp()
	case tickMsg:
		return m, tea.Batch(m.collect(), tick())
	case eventMsg:
		return m, tea.Batch(m.collect(), m.waitEvent())
	case cancelledMsg:
		m.ui.Status = string(msg)
		return m, m.collect()
	case tea.KeyPressMsg:
		return m.key(msg.String())
	}
	return m, nil
}

// key handles a key press: quit, move the selection, ask to cancel the
// selected held message and answer the question.
func (m model) key(k string) (tea.Model, tea.Cmd) {
	if m.ui.Confirm != "" {
		id := m.pending
		m.ui.Confirm, m.pending = "", ""
		if k == "y" || k == "Y" {
			m.ui.Status = "cancelling…"
			return m, m.cancel(id)
		}
		m.ui.Status = "not cancelled"
		return m, nil
	}
	switch k {
	case "q", "ctrl+c", "esc":
		return m, tea.Quit
	case "up", "k":
		m.ui.Selected--
		m.clamp()
	case "down", "j":
		m.ui.Selected++
		m.clamp()
	case "c", "x", "delete":
		if m.ui.Selected < 0 || m.ui.Selected >= len(m.snap.Held) {
			m.ui.Status = "select a held message first (↑/↓)"
			return m, nil
		}
		h := m.snap.Held[m.ui.Selected]
		if !h.Cancel {
			m.ui.Status = "that message is being typed: it cannot be cancelled"
			return m, nil
		}
		m.pending = h.ID
		m.ui.Confirm = fmt.Sprintf("Cancel the message %s → %s (held %s)? It will never be typed. y/n", h.From, h.To, age(h.Age))
	}
	return m, nil
}

func (m *model) clamp() {
	switch n := len(m.snap.Held); {
	case n == 0:
		m.ui.Selected = -1
	case m.ui.Selected < 0:
		m.ui.Selected = 0
	case m.ui.Selected >= n:
		m.ui.Selected = n - 1
	}
}

func (m model) cancel(id string) tea.Cmd {
	return func() tea.Msg {
		if err := Cancel(m.src.Store, m.locker, id, cancelWait, m.src.Now()); err != nil {
			return cancelledMsg("not cancelled: " + err.Error())
		}
		return cancelledMsg("cancelled")
	}
}

func (m model) View() tea.View {
	v := tea.NewView(Render(m.snap, m.ui, m.width))
	v.AltScreen = true
	return v
}

// Errors of Cancel.
var (
	ErrNotHeld = errors.New("it is no longer held (typed, ended or cancelled meanwhile)")
	ErrTyping  = errors.New("it is being typed")
	ErrBusy    = errors.New("its target's delivery lock stayed taken (a delivery is under way); try again")
)

// Cancel ends held message id as cancelled, under its target's delivery
// lock (as 'herdr-link outbox cancel' does): no delivery can claim it
// meanwhile, and one that claimed it before has it being typed, which is
// refused.
func Cancel(st *outbox.Store, pl *panelock.Locker, id string, wait time.Duration, now time.Time) error {
	if st == nil {
		return errors.New("no outbox")
	}
	read := func() (outbox.Message, error) {
		e, err := st.Find(id)
		switch {
		case errors.Is(err, outbox.ErrNotFound):
			return outbox.Message{}, ErrNotHeld
		case err != nil:
			return outbox.Message{}, err
		case e.State == outbox.StateTyping:
			return outbox.Message{}, ErrTyping
		case e.State != outbox.StateHeld:
			return outbox.Message{}, ErrNotHeld
		}
		return st.Read(e)
	}
	m, err := read()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	lease, err := pl.Lock(ctx, m.TargetKey, wait)
	switch {
	case err != nil && ctx.Err() != nil:
		return ErrBusy
	case err != nil:
		return fmt.Errorf("no delivery lock: %w", err)
	}
	defer lease.Unlock()
	if m, err = read(); err != nil {
		return err
	}
	return st.End(m, outbox.EndCancelled, now)
}
