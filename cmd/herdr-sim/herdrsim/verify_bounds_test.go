package herdrsim

import (
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/limited/limitedtest"
	"github.com/herdr-link/herdr-link/internal/recording"
)

// herdr-sim verify bounds its input before buffering it: an endless file
// is refused at the header, or at the first line longer than the line
// bound, with no more read than that bound and one pipe buffer.
func TestVerifyEndlessInput(t *testing.T) {
	const slack = 256 << 10
	tests := []struct {
		name    string
		prefix  string
		maxRead int64
		want    string
	}{
		{"endless first line", "", slack, "not a herdr-link recording"},
		{"endless request line", recording.Header + "\n> ", recording.MaxLine + slack, "line 2 is longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			feed := limitedtest.Endless(t, tt.prefix, 2*recording.MaxLine+slack)
			out, errOut, code := runCLI(t, "verify", feed.Path)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Errorf("verify: exit %d, want 2 and %q\n%s%s", code, tt.want, out, errOut)
			}
			if n := feed.Wait(); n > tt.maxRead {
				t.Errorf("verify took %d bytes of an endless file, want at most %d", n, tt.maxRead)
			}
		})
	}
	t.Run("/dev/zero", func(t *testing.T) {
		if _, errOut, code := runCLI(t, "verify", "/dev/zero"); code != 2 || !strings.Contains(errOut, "not a herdr-link recording") {
			t.Errorf("verify /dev/zero: exit %d\n%s", code, errOut)
		}
	})
}
