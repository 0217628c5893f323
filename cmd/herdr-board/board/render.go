package board

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
)

// Styles of the board.
var (
	titleStyle   = lipgloss.NewStyle().Bold(true)
	headStyle    = lipgloss.NewStyle().Bold(true).Underline(true)
	dimStyle     = lipgloss.NewStyle().Faint(true)
	errStyle     = lipgloss.NewStyle().Foreground(lipgloss.Red)
	selStyle     = lipgloss.NewStyle().Reverse(true)
	statusStyles = map[string]lipgloss.Style{
		"idle":    lipgloss.NewStyle().Foreground(lipgloss.Green),
		"done":    lipgloss.NewStyle().Foreground(lipgloss.Green),
		"working": lipgloss.NewStyle().Foreground(lipgloss.Yellow),
		"blocked": lipgloss.NewStyle().Foreground(lipgloss.Red),
	}
)

// maxRecent is how many recent outcomes the board lists.
const maxRecent = 8

// UI is the interactive part of the view: the selected held message, and
// the question being asked.
type UI struct {
	// Selected is the index of the selected held message (-1: none).
	Selected int
	// Confirm, when set, is the question shown at the bottom.
	Confirm string
	// Status is the last action's result.
	Status string
	// Keys shows the key help line.
	Keys bool
}

// Render draws snap, width columns wide at most (0: no limit).
func Render(snap Snapshot, ui UI, width int) string {
	var b strings.Builder
	b.WriteString(titleStyle.Render("herdr-board") + dimStyle.Render(" · "+snap.Scope) + "\n")
	if snap.Err != "" {
		b.WriteString(errStyle.Render("! "+snap.Err) + "\n")
	}
	section(&b, fmt.Sprintf("Agents (%d)", len(snap.Agents)))
	rows := [][]string{}
	for _, a := range snap.Agents {
		rows = append(rows, []string{a.Name, a.Kind, a.Status, counted(a.Held, "held for it"), counted(a.Awaits, "awaiting answers")})
	}
	table(&b, rows, func(i, col int, s string) string {
		if col == 2 {
			if st, ok := statusStyles[snap.Agents[i].Status]; ok {
				return st.Render(s)
			}
		}
		return s
	}, -1)
	section(&b, fmt.Sprintf("Held messages (%d)", len(snap.Held)))
	rows = rows[:0]
	for _, h := range snap.Held {
		kind := "message"
		if h.Notice {
			kind = "notice"
		}
		rows = append(rows, []string{h.From + " → " + h.To, kind, age(h.Age), h.Why})
	}
	table(&b, rows, nil, ui.Selected)
	section(&b, fmt.Sprintf("Open requests (%d)", len(snap.Requests)))
	rows = rows[:0]
	for _, r := range snap.Requests {
		rows = append(rows, []string{r.From + " awaits " + r.To, age(r.Age), r.State})
	}
	table(&b, rows, nil, -1)
	recent := snap.Recent[:min(len(snap.Recent), maxRecent)]
	section(&b, fmt.Sprintf("Recent outcomes and notices (%d)", len(recent)))
	rows = rows[:0]
	for _, r := range recent {
		rows = append(rows, []string{r.From + " → " + r.To, r.What, age(r.Ago) + " ago"})
	}
	table(&b, rows, nil, -1)
	if ui.Confirm != "" {
		b.WriteString("\n" + selStyle.Render(ui.Confirm) + "\n")
	} else if ui.Status != "" {
		b.WriteString("\n" + ui.Status + "\n")
	}
	if ui.Keys {
		b.WriteString("\n" + dimStyle.Render("↑/↓ select a held message · c cancel it · q quit") + "\n")
	}
	out := b.String()
	if width > 0 {
		out = lipgloss.NewStyle().MaxWidth(width).Render(out)
	}
	return out
}

func section(b *strings.Builder, title string) {
	b.WriteString("\n" + headStyle.Render(title) + "\n")
}

// table writes rows in aligned columns, style styling each cell (nil:
// none), the row selected marked and reversed; "(none)" when there are
// no rows.
func table(b *strings.Builder, rows [][]string, style func(row, col int, s string) string, selected int) {
	if len(rows) == 0 {
		b.WriteString(dimStyle.Render("  (none)") + "\n")
		return
	}
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], lipgloss.Width(c))
		}
	}
	for ri, r := range rows {
		for len(r) > 1 && r[len(r)-1] == "" {
			r = r[:len(r)-1]
		}
		var line strings.Builder
		if ri == selected {
			line.WriteString("› ")
		} else {
			line.WriteString("  ")
		}
		for i, c := range r {
			cell := c
			if i < len(r)-1 {
				cell += strings.Repeat(" ", widths[i]-lipgloss.Width(c)+2)
			}
			if style != nil {
				cell = style(ri, i, cell)
			}
			line.WriteString(cell)
		}
		s := strings.TrimRight(line.String(), " ")
		if ri == selected {
			s = selStyle.Render(s)
		}
		b.WriteString(s + "\n")
	}
}

func counted(n int, what string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d %s", n, what)
}

// age is d rounded for a person: 5s, 3m, 2h.
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh", int(d.Hours()))
}
