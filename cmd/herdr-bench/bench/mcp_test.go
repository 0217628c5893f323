package bench

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/cmd/herdr-link/herdrlink"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// beLink set to 1 makes the test binary run as herdr-link: the handshake's
// server without a build.
const beLink = "HERDR_BENCH_TEST_BE_LINK"

func TestMain(m *testing.M) {
	if os.Getenv(beLink) == "1" {
		os.Exit(herdrlink.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestHandshake(t *testing.T) {
	srv := simtest.New(t, nil)
	for _, kv := range srv.Env("w1:p1") {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv(beLink, "1")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := handshake(t.Context(), []string{self, "serve", "-no-bootstrap"}, false, &out, &errb)
	for _, w := range []string{"initialize", "notifications/tools/list_changed", "tools/list (active)", "ping"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("lacks %q", w)
		}
	}
	if code != 0 || strings.Contains(out.String(), "FAIL") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}
