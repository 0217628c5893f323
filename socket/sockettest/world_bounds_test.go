package sockettest_test

import (
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/limited/limitedtest"
	"github.com/herdr-link/herdr-link/socket/sockettest"
)

// A world file over the bound is refused as too large, not parsed
// truncated, and no more of it is read than the bound.
func TestLoadWorldEndless(t *testing.T) {
	const bound, slack = 64 << 20, 256 << 10
	feed := limitedtest.Endless(t, `{"workspaces":[`, 2*bound)
	_, err := sockettest.LoadWorld(feed.Path)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("LoadWorld: %v, want a too-large error", err)
	}
	if n := feed.Wait(); n > bound+slack {
		t.Errorf("LoadWorld took %d bytes, want at most %d", n, bound+slack)
	}
}
