package demo

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/cmd/herdr-link/herdrlink"
)

// beLink set to 1 makes the test binary run as herdr-link: the demo's
// agents' servers without a build.
const beLink = "HERDR_DEMO_TEST_BE_LINK"

func TestMain(m *testing.M) {
	if os.Getenv(beLink) == "1" {
		os.Exit(herdrlink.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three herdr-link processes for a few seconds")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(beLink, "1")
	var out, errb bytes.Buffer
	if code := Run([]string{"-link", self}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"herdr-sim demo: three agents", `PEER_NOT_FOUND`, `"status":"sent"`, `"delivery":"submitted"`, `"delivery":"held"`,
		"received 2 separate turns", "once the reviewer had finished it", `"status":"closed"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
	// No message interrupts a working agent, none is queued into its turn.
	for _, never := range []string{"interrupting", `"delivery":"queued"`} {
		if strings.Contains(out.String(), never) {
			t.Errorf("demo output holds %q:\n%s", never, out.String())
		}
	}
}

func TestDemoNeedsHerdrLink(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run([]string{"-link", "/nonexistent/herdr-link"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "herdr-sim demo:") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
