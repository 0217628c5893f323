package recording

// SetMaxTotal sets the bound of a whole recording for a test; the
// returned function restores it.
func SetMaxTotal(n int) func() {
	old := maxTotal
	maxTotal = n
	return func() { maxTotal = old }
}
