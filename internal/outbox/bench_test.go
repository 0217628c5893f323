package outbox

import "testing"

// BenchmarkOwedLookup is what herdr_link_peers asks of the store on every
// call: the caller's key hash and its entries (a stat of the directory
// when its last listing can be reused).
func BenchmarkOwedLookup(b *testing.B) {
	st, err := Open(b.TempDir(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.BySender("x"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.BySender(st.KeyHash("term_self")); err != nil {
			b.Fatal(err)
		}
	}
}
