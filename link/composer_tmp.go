package link

import "context"

// Placeholder until the composer rules land (replaced by composer.go).

type ComposerState int

const (
	ComposerEmpty ComposerState = iota
	ComposerDraft
	ComposerUnknown
)

func (l *Link) composer(ctx context.Context, a Agent) (ComposerState, error) {
	return ComposerUnknown, nil
}
