package schemalite_test

import (
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/limited/limitedtest"
	"github.com/herdr-link/herdr-link/internal/schemalite"
)

// herdr-sim validate FILE bounds the schema document it reads: an endless
// file is refused as too large after the bound, not read until memory
// runs out.
func TestLoadEndless(t *testing.T) {
	const slack = 256 << 10
	feed := limitedtest.Endless(t, `{"schemas":{`, 2*schemalite.MaxDocument+slack)
	_, err := schemalite.Load(feed.Path)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Load: %v, want a too-large error", err)
	}
	if n := feed.Wait(); n > schemalite.MaxDocument+slack {
		t.Errorf("Load took %d bytes, want at most %d", n, schemalite.MaxDocument+slack)
	}
}
