//go:build !unix

package tui

// Cleanup does nothing where the TUIs cannot run in simulator panes.
func (r *Run) Cleanup() ([]int, error) { return nil, nil }
