package sibling

import (
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	if _, err := Find("no-such-binary-here", "link", ""); err == nil || !strings.Contains(err.Error(), "-link") {
		t.Fatalf("err %v, want one naming -link", err)
	}
	if p, err := Find("x", "link", "./rel/x"); err != nil || !strings.HasSuffix(p, "/rel/x") || !strings.HasPrefix(p, "/") {
		t.Fatalf("-link ./rel/x: %q %v", p, err)
	}
}
