//go:build unix

package realherdr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Find takes $HERDR_LINK_REAL_HERDR as a folder or as the binary, and says
// what is missing when it cannot start a real Herdr.
func TestFind(t *testing.T) {
	withBin := t.TempDir()
	for _, f := range []string{"herdr", "start-herdr.sh"} {
		if err := os.WriteFile(filepath.Join(withBin, f), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	empty := t.TempDir()
	tests := []struct {
		name, env, wantBin, wantErr string
	}{
		{"a folder", withBin, filepath.Join(withBin, "herdr"), ""},
		{"the binary", filepath.Join(withBin, "herdr"), filepath.Join(withBin, "herdr"), ""},
		{"no binary there", empty, "", "no herdr binary there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvDir, tt.env)
			script, bin, err := Find()
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Find: got %v, want an error with %q", err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case bin != tt.wantBin || script != filepath.Join(withBin, "start-herdr.sh"):
				t.Fatalf("Find: got %s, %s, want %s beside its script", script, bin, tt.wantBin)
			}
		})
	}
}
