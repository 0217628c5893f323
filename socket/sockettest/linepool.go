package sockettest

import "sync"

// Large response lines (a cached 10,000-agent list is 2 MB) are built in
// recycled buffers: allocating and clearing megabytes per request made the
// simulator, not the client under measurement, the cost of a large
// agent.list. Nothing keeps a line after [Server.reply] wrote it.

const pooledLine = 256 << 10

var linePool sync.Pool // of *[]byte, cap ≥ pooledLine

// lineBuffer returns an empty buffer with room for n bytes.
func lineBuffer(n int) []byte {
	if n < pooledLine {
		return make([]byte, 0, n)
	}
	if p, ok := linePool.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, n)
}

// releaseLine recycles a written line's buffer.
func releaseLine(b []byte) {
	if cap(b) < pooledLine {
		return
	}
	b = b[:0]
	linePool.Put(&b)
}
