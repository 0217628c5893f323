package herdrsim

import (
	"testing"

	"github.com/herdr-link/herdr-link/socket/sockettest"
)

func TestUseRelease(t *testing.T) {
	t.Setenv(sockettest.EnvHerdrVersion, "")
	for _, tc := range []struct {
		version    string
		protocol   uint
		wantV      string
		wantP      uint32
		afterEnter bool
	}{
		{"", 0, "0.8.2", 20, false},
		{"", 20, "0.8.2", 20, false},
		{"", 22, sockettest.NewestHerdr, 22, true},
		{"", 19, "0.8.0", 19, false},
		{"0.9.1", 0, "0.9.1", 22, true},
		{"0.9.5", 0, "0.9.5", 22, true},
		{"0.8.2", 0, "0.8.2", 20, false},
		{"0.9.1", 23, "0.9.1", 23, true}, // a release with another protocol number
		{"0.8.0", 0, "0.8.0", 20, false}, // not simulated: only reported
	} {
		srv := sockettest.NewUnstartedServer(nil)
		if _, err := useRelease(srv, tc.version, tc.protocol); err != nil {
			t.Fatalf("useRelease(%q, %d): %v", tc.version, tc.protocol, err)
		}
		if srv.Version != tc.wantV || srv.Protocol != tc.wantP || srv.Release().PromptAfterEnter != tc.afterEnter {
			t.Errorf("%q/%d: version %s, protocol %d, prompt after Enter %v; want %s, %d, %v", tc.version, tc.protocol,
				srv.Version, srv.Protocol, srv.Release().PromptAfterEnter, tc.wantV, tc.wantP, tc.afterEnter)
		}
	}
}
