package sockettest

// A Checker validates lines a server writes; Count is how many passed.
// internal/schemacheck's validator (Herdr's schema, in tests) and
// internal/schemalite's (herdr-sim serve --validate) are Checkers. A
// server uses one when its Check field is set to the checker's Line.
type Checker interface {
	Line(line []byte) error
	Count() int64
}
