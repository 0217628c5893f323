package herdrlink

// ignoreSIGPIPE is a no-op: Windows has no SIGPIPE; a write to a closed
// pipe returns an error.
func ignoreSIGPIPE() (stop func()) { return func() {} }
