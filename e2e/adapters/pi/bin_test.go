package pi_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pi "github.com/herdr-link/herdr-link/adapters/pi"
)

// driveFile runs the driver on the extension source src (written to a
// file of its own) with HERDR_LINK_BIN=envBin, and returns its notices.
func driveFile(t *testing.T, nodeBin, src, envBin string) []string {
	t.Helper()
	ext := filepath.Join(t.TempDir(), "herdr-link.ts")
	if err := os.WriteFile(ext, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	driver, _ := filepath.Abs(filepath.Join("testdata", "driver.mjs"))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, driver, ext)
	cmd.Env = append(os.Environ(), "HERDR_LINK_BIN="+envBin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("driver: %v\n%s", err, stderr.String())
	}
	var r report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("driver output %q: %v", out, err)
	}
	return r.Notices
}

// The path `herdr-link config pi` fills in is the binary the extension
// runs, whatever HERDR_LINK_BIN says; a copied file (the bare name) takes
// HERDR_LINK_BIN.
func TestExtensionBinaryChoice(t *testing.T) {
	nodeBin := node(t)
	dir := t.TempDir()
	filled, env := filepath.Join(dir, "filled-herdr-link"), filepath.Join(dir, "env-herdr-link")
	tests := []struct {
		name, src, want, not string
	}{
		{"filled in by config pi", pi.Extension(filled), filled, env},
		{"copied as it is", pi.Source, env, filled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			notices := driveFile(t, nodeBin, tt.src, env)
			all := strings.Join(notices, "\n")
			if !strings.Contains(all, "could not start "+tt.want) || strings.Contains(all, tt.not) {
				t.Fatalf("notices %q: want the extension to run %s", all, tt.want)
			}
		})
	}
}
