package recording

import "io"

// ParseMax is Parse with the whole recording bounded by maxTotal instead of
// MaxTotal, for a test.
func ParseMax(r io.Reader, maxTotal int) ([]Exchange, error) { return parse(r, maxTotal) }
