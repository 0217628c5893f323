package pi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/bins"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/socket/sockettest"
	"github.com/herdr-link/herdr-link/socket/sockettest/simtest"
)

// node finds a Node that strips TypeScript types (22.6 or later):
// HERDR_LINK_NODE, else the one the host runner installed for Pi 1.6 in
// its cache (HERDR_LINK_HOST_CACHE, ~/.cache/herdr-link-hosts), else node
// on PATH. The host runner exercises the adapter inside the real Pi; this
// test checks it against herdr-link without Pi.
func node(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("HERDR_LINK_NODE")
	if bin == "" {
		cache := os.Getenv("HERDR_LINK_HOST_CACHE")
		if home, err := os.UserHomeDir(); cache == "" && err == nil {
			cache = filepath.Join(home, ".cache", "herdr-link-hosts")
		}
		bin = filepath.Join(cache, "pi16-1.6.0", "node_modules", ".bin", "node")
		if _, err := os.Stat(bin); err != nil {
			bin = "node"
		}
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Skipf("no Node to run the Pi adapter (set HERDR_LINK_NODE to Node 22.6 or later): %v", err)
	}
	m := regexp.MustCompile(`^v(\d+)\.(\d+)`).FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		t.Skipf("node --version: %q", out)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major < 22 || major == 22 && minor < 6 {
		t.Skipf("Node %s cannot strip TypeScript types; set HERDR_LINK_NODE to Node 22.6 or later", strings.TrimSpace(string(out)))
	}
	return bin
}

type result struct {
	Text    string         `json:"text"`
	Error   string         `json:"error"`
	Missing bool           `json:"missing"`
	Details map[string]any `json:"details"`
}

// String shows a tool result as a failure message reads it.
func (r result) String() string {
	switch {
	case r.Missing:
		return "missing"
	case r.Error != "":
		return fmt.Sprintf("error %q", r.Error)
	}
	return fmt.Sprintf("text %q", r.Text)
}

type report struct {
	AtLoad          []string `json:"atLoad"`
	SystemPrompt    string   `json:"systemPrompt"`
	Notices         []string `json:"notices"`
	Activate        result   `json:"activate"`
	AfterActivation []string `json:"afterActivation"`
	Active          []string `json:"active"`
	Peers           result   `json:"peers"`
	Send            result   `json:"send"`
	Hidden          result   `json:"hidden"`
	GatewayPeers    result   `json:"gatewayPeers"`
	Events          []string `json:"events"`
}

const world = `{"workspaces":[
 {"id":"w1","label":"app","tabs":[{"id":"w1:t1","panes":[
   {"id":"w1:p1","agent":{"kind":"pi","name":"brain","status":"working"}},
   {"id":"w1:p2","agent":{"kind":"claude","name":"reviewer","status":"idle"}}]}]},
 {"id":"w2","label":"infra","tabs":[{"id":"w2:t1","panes":[{"id":"w2:p1","agent":{"kind":"claude","name":"ops","status":"idle"}}]}]}]}`

func drive(t *testing.T, nodeBin, linkBin string, env []string) report {
	t.Helper()
	ext, _ := filepath.Abs(filepath.Join("..", "..", "..", "adapters", "pi", "herdr-link.ts"))
	driver, _ := filepath.Abs(filepath.Join("testdata", "driver.mjs"))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, driver, ext)
	cmd.Env = append(os.Environ(), append(env, "HERDR_LINK_BIN="+linkBin)...)
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
	return r
}

func buildLink(t *testing.T) string {
	t.Helper()
	bin, err := bins.Path("herdr-link")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// The adapter registers the gateway at load, and after activation the
// Tier-1 tools, made active through setActiveTools (only after
// session_start); results and errors pass through unchanged.
func TestAdapterInHerdr(t *testing.T) {
	nodeBin := node(t)
	linkBin := buildLink(t)
	w, err := sockettest.ParseWorld([]byte(world))
	if err != nil {
		t.Fatal(err)
	}
	srv := simtest.New(t, w)
	r := drive(t, nodeBin, linkBin, srv.Env("w1:p1"))
	if strings.Join(r.AtLoad, ",") != "herdr_link" {
		t.Fatalf("tools at load %v, want the gateway", r.AtLoad)
	}
	if !strings.Contains(r.Activate.Text, link.Contract) || r.Activate.Error != "" {
		t.Errorf("activation result %v, want the contract and no error", r.Activate)
	}
	if strings.Join(r.AfterActivation, ",") != "herdr_link,herdr_link_peers,herdr_link_start,herdr_link_send,herdr_link_wait,herdr_link_close" {
		t.Errorf("tools after activation %v", r.AfterActivation)
	}
	for _, want := range []string{"read", "bash", "herdr_link", "herdr_link_peers", "herdr_link_send", "herdr_link_close"} {
		if !strings.Contains(","+strings.Join(r.Active, ",")+",", ","+want+",") {
			t.Errorf("active tools %v lack %s (the user's own tools must stay active)", r.Active, want)
		}
	}
	if !strings.Contains(r.Peers.Text, `"reviewer"`) || strings.Contains(r.Peers.Text, "ops") || r.Peers.Details["peers"] == nil {
		t.Errorf("peers %v (details has peers: %v), want reviewer, not ops, and peers in the details", r.Peers, r.Peers.Details["peers"] != nil)
	}
	if !strings.Contains(r.Send.Text, `"status":"sent"`) {
		t.Errorf("send %v, want \"status\":\"sent\"", r.Send)
	}
	if !strings.HasPrefix(r.Hidden.Error, "PEER_NOT_FOUND: ") {
		t.Errorf("send to another workspace: %v, want a thrown PEER_NOT_FOUND", r.Hidden)
	}
	if !strings.Contains(r.GatewayPeers.Text, `"reviewer"`) || strings.Contains(r.GatewayPeers.Text, link.Contract) {
		t.Errorf("gateway peers %v, want reviewer and not the contract", r.GatewayPeers)
	}
	if n := len(w.Inputs("w1:p2")); n == 0 {
		t.Error("nothing reached the reviewer's pane")
	}
	if len(r.Notices) > 0 {
		t.Errorf("notices in Herdr: %v", r.Notices)
	}
	if !strings.HasPrefix(r.SystemPrompt, "BASE\n\n# herdr_link") || !strings.Contains(r.SystemPrompt, "call the herdr_link tool with {}") {
		t.Errorf("system prompt %q lacks herdr-link's instructions", r.SystemPrompt)
	}
}

// Without the herdr-link binary the adapter registers nothing, says why,
// and Pi keeps running.
func TestAdapterWithoutBinary(t *testing.T) {
	nodeBin := node(t)
	r := drive(t, nodeBin, filepath.Join(t.TempDir(), "no-such-herdr-link"), nil)
	// The user's notice names the missing binary; the model's text does not.
	if len(r.AtLoad) != 0 || len(r.Notices) != 1 || !strings.Contains(r.Notices[0], "could not start") || !strings.Contains(r.Notices[0], "no-such-herdr-link") {
		t.Fatalf("tools at load %v, notices %q; want none, one notice that could not start no-such-herdr-link", r.AtLoad, r.Notices)
	}
	if strings.Contains(r.SystemPrompt, "no-such-herdr-link") || !strings.Contains(r.SystemPrompt, "herdr-link is not running") {
		t.Errorf("system prompt %q", r.SystemPrompt)
	}
	if len(r.Events) != 0 {
		t.Errorf("tool changes without a server: %v", r.Events)
	}
}

// Outside Herdr the adapter registers nothing and shows the user why.
func TestAdapterOutsideHerdr(t *testing.T) {
	nodeBin := node(t)
	linkBin := buildLink(t)
	r := drive(t, nodeBin, linkBin, []string{"HERDR_ENV=", "HERDR_PANE_ID="})
	if len(r.AtLoad) != 0 {
		t.Fatalf("tools outside Herdr: %v", r.AtLoad)
	}
	if len(r.Notices) != 1 || !strings.Contains(r.Notices[0], "HERDR_ENV is not set") {
		t.Fatalf("notices %v", r.Notices)
	}
	if !strings.Contains(r.SystemPrompt, "Herdr Link offers no tools here: HERDR_ENV is not set") {
		t.Errorf("the model is not told why there are no tools: %q", r.SystemPrompt)
	}
}
