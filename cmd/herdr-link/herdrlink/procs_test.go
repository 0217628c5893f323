package herdrlink

import (
	"runtime"
	"testing"
)

func TestServeProcs(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	for _, tc := range []struct {
		env  string
		want int
	}{
		{"", 1},
		{"3", was}, // GOMAXPROCS chosen by the user: left as the runtime set it
	} {
		runtime.GOMAXPROCS(was)
		got := serveProcs(func(k string) string {
			if k == "GOMAXPROCS" {
				return tc.env
			}
			return ""
		})
		if got != tc.want || runtime.GOMAXPROCS(0) != tc.want {
			t.Errorf("GOMAXPROCS=%q: serveProcs = %d, runtime has %d; want %d", tc.env, got, runtime.GOMAXPROCS(0), tc.want)
		}
	}
}
