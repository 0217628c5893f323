package sockettest

// LockWorld holds w's lock (the app loop busy) until the returned func.
func LockWorld(w *World) (unlock func()) { return w.Busy() }
