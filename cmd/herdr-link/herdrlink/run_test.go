package herdrlink

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/herdr-link/herdr-link/internal/panelock"
)

// The outbox of a one-shot pass (herdr-link deliver) keeps no spare
// files: it would create them in the background only for its Release to
// remove them. The server's (linkFromEnv) turns them on.
func TestOpenOutboxWithoutSpares(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "locks")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	pl := &panelock.Locker{Scope: filepath.Join(t.TempDir(), "herdr.sock"), Dir: dir}
	st := openOutbox(pl, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if st == nil {
		t.Fatal("openOutbox: got no store, want one in the private lock directory")
	}
	defer st.Release()
	if st.Spares {
		t.Errorf("openOutbox: got a store with spares, want none (a server's turns them on)")
	}
}
