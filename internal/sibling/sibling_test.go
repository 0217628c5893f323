package sibling

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	if _, err := Find("no-such-binary-here", "link", ""); err == nil || !strings.Contains(err.Error(), "-link") {
		t.Fatalf("err %v, want one naming -link", err)
	}
	if _, err := Find("x", "link", "./rel/x"); err == nil || !strings.Contains(err.Error(), "-link ./rel/x: not a file") {
		t.Fatalf("-link ./rel/x: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if p, err := Find("x", "link", "./x"); err != nil || p != filepath.Join(dir, "x") {
		t.Fatalf("-link ./x: %q %v", p, err)
	}
}
