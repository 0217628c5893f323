package herdrlink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// A recording of a Herdr 0.9 names its version, and herdr-sim verify
// replays it against the 0.9 model. There is no recording of a real 0.9
// (only 0.8.2 ones exist); this synthetic one is made by probe --record
// against the simulator as 0.9.1, at test time.
func TestRecordThenVerify09(t *testing.T) {
	srv := simtest.New(t, nil, func(s *sockettest.Server) {
		s.Tick = 10 * time.Millisecond
		if err := s.UseHerdr(sockettest.NewestHerdr); err != nil {
			t.Fatal(err)
		}
	})
	setPane(t, srv, "w1:p1")
	// A retained pane_closed: a 0.9 subscription must not replay it.
	if err := srv.World.Close("w2:p2"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "rec09.txt")
	out, errOut, code := runProbeEvents(t, 300*time.Millisecond, "--record", file)
	if code != 0 {
		t.Fatalf("probe --record: exit %d\n%s%s", code, out, errOut)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rec := string(data)
	if !strings.Contains(rec, "Herdr "+sockettest.NewestHerdr+", protocol 22") {
		t.Errorf("the recording does not name its Herdr:\n%s", rec)
	}
	if strings.Contains(rec, `"event":"pane_closed"`) {
		t.Errorf("the 0.9 subscription replayed history:\n%s", rec)
	}
	if got, code := verifyRecording(t, file); code != 0 || !strings.Contains(got, "no structural difference") {
		t.Fatalf("verify: exit %d\n%s", code, got)
	}
}
