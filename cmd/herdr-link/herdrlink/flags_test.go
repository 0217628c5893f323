package herdrlink

import (
	"bytes"
	"strings"
	"testing"
)

// -timeout must be positive.
func TestTimeoutFlagMustBePositive(t *testing.T) {
	for _, v := range []string{"0", "0s", "-1s"} {
		var stderr bytes.Buffer
		code := Run([]string{"-timeout", v}, strings.NewReader(""), &bytes.Buffer{}, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "must be positive") {
			t.Errorf("-timeout %s: exit %d, stderr %q", v, code, stderr.String())
		}
	}
}

// -submit-hold must be positive and at most 30 s: a hold keeps the
// process alive at exit that long.
func TestSubmitHoldFlagBounds(t *testing.T) {
	for _, v := range []string{"0", "-1s", "31s", "1h"} {
		var stderr bytes.Buffer
		code := Run([]string{"-submit-hold", v}, strings.NewReader(""), &bytes.Buffer{}, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "must be positive and at most 30s") {
			t.Errorf("-submit-hold %s: exit %d, stderr %q", v, code, stderr.String())
		}
	}
}
