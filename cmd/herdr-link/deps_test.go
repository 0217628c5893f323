package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/herdr-link/herdr-link"

// goList runs `go list -json` with args and decodes its package stream.
func goList(t *testing.T, args ...string) []struct {
	ImportPath string
	Imports    []string
	Deps       []string
} {
	t.Helper()
	return goListIn(t, "", args...)
}

// goListIn is goList in the directory dir ("" for this one).
func goListIn(t *testing.T, dir string, args ...string) []struct {
	ImportPath string
	Imports    []string
	Deps       []string
} {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	var pkgs []struct {
		ImportPath string
		Imports    []string
		Deps       []string
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Deps       []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestDeps: the MCP server binary, which runs in every agent's pane,
// links only the product. No simulator, no MCP client, no test harness or
// test support, no other command's code, no JSON Schema validator library,
// and no third-party module but the two the server needs. No exceptions.
func TestDeps(t *testing.T) {
	pkgs := goList(t, "-deps", ".")
	if len(pkgs) < 10 {
		t.Fatalf("go list -deps: %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		if p.ImportPath == module+"/cmd/herdr-link" {
			continue
		}
		if why := forbiddenInServer(p.ImportPath); why != "" {
			t.Errorf("herdr-link links %s: %s", p.ImportPath, why)
		}
	}
}

// forbiddenInServer says why the server binary must not link path, or "".
func forbiddenInServer(path string) string {
	rel, inModule := strings.CutPrefix(path, module+"/")
	under := func(p string) bool { return rel == p || strings.HasPrefix(rel, p+"/") }
	switch {
	case path == "testing" || strings.HasPrefix(path, "testing/"):
		return "the testing package is for tests"
	case strings.Contains(path, "jsonschema"):
		return "a JSON Schema library (start-up cost; internal/schemalite does the probe's checks)"
	case strings.Contains(path, "modelcontextprotocol"):
		return "an MCP SDK: the server is link/mcpserver"
	case !inModule:
		if std := !strings.Contains(strings.SplitN(path, "/", 2)[0], "."); std {
			return ""
		}
		for _, ok := range []string{"github.com/goccy/go-json", "github.com/sourcegraph/jsonrpc2"} {
			if path == ok || strings.HasPrefix(path, ok+"/") {
				return ""
			}
		}
		return "a third-party module the server does not need"
	case under("socket/sockettest"):
		return "the simulator is for tests, herdr-sim and herdr-bench"
	case under("internal/mcpclient"):
		return "an MCP client is for tests, the demo and the bench"
	case under("internal/schemacheck"), under("e2e"), strings.Contains(rel, "harness"):
		return "test support"
	case under("internal/recording"), under("internal/jsonshape"), under("internal/schemalite"):
		return "recording and validating Herdr's traffic is herdr-sim's work (record, validate, verify)"
	case under("cmd/herdr-link/herdrlink"):
		return ""
	case under("cmd"):
		return "another command's code"
	}
	return ""
}

// TestNoUnsafe: no package of the module imports unsafe in its product
// files (the simulator's included: herdr-sim and herdr-bench ship it).
func TestNoUnsafe(t *testing.T) {
	for _, p := range goList(t, module+"/...") {
		if slices.Contains(p.Imports, "unsafe") {
			t.Errorf("%s imports unsafe", p.ImportPath)
		}
	}
}

// TestForbiddenInServer: the rule above refuses what it must (so that
// TestDeps can fail).
func TestForbiddenInServer(t *testing.T) {
	for _, tt := range []struct {
		path string
		bad  bool
	}{
		{"testing", true}, {"testing/synctest", true},
		{module + "/socket/sockettest", true}, {module + "/socket/sockettest/ptypane", true}, {module + "/socket/sockettest/simtest", true},
		{module + "/internal/mcpclient", true}, {module + "/internal/schemacheck", true},
		{module + "/cmd/herdr-bench/bench", true}, {module + "/cmd/herdr-sim/demo", true}, {module + "/cmd/herdr-sim/herdrsim", true}, {module + "/cmd/herdr-board/board", true},
		{module + "/e2e/internal/hosttest", true}, {module + "/cmd/herdr-sim", true},
		{"github.com/modelcontextprotocol/go-sdk/mcp", true}, {"github.com/santhosh-tekuri/jsonschema/v6", true},
		{"github.com/creack/pty", true}, {"github.com/charmbracelet/x/vt", true},
		{"fmt", false}, {"net/http", false}, {"github.com/goccy/go-json/internal/encoder", false}, {"github.com/sourcegraph/jsonrpc2", false},
		{module + "/socket", false}, {module + "/link/mcpserver", false}, {module + "/link/deliver", false}, {module + "/link/start", false}, {module + "/link/courier", false}, {module + "/link/proto", false}, {module + "/cmd/herdr-link/herdrlink", false},
		{module + "/internal/recording", true}, {module + "/internal/jsonshape", true}, {module + "/internal/schemalite", true},
	} {
		if got := forbiddenInServer(tt.path) != ""; got != tt.bad {
			t.Errorf("forbiddenInServer(%s) = %v, want %v", tt.path, got, tt.bad)
		}
	}
}

// testingHarnesses are the packages besides _test files that may import
// the testing package: test support built on testing.T or testing.M. Every
// other package, in both modules, must not.
var testingHarnesses = map[string]bool{
	module + "/socket/sockettest/simtest":    true, // simulators for tests: simtest.New(t, …), simtest.Main(m)
	module + "/e2e/internal/fakemodel":       true, // fake model servers for host tests: fakemodel.Start(t, …)
	module + "/internal/limited/limitedtest": true, // endless inputs for tests of bounded readers: limitedtest.Endless(t, …)
	module + "/e2e/internal/realherdr":       true, // a real Herdr for the real-Herdr lane: realherdr.Start(t, …)
}

// TestTestingImports: only _test files and the named harnesses import
// testing (and testing/...), in the root module and in e2e/.
func TestTestingImports(t *testing.T) {
	for _, dir := range []string{"../..", "../../e2e"} {
		pkgs := goListIn(t, dir, "./...")
		if len(pkgs) < 5 {
			t.Fatalf("go list in %q: %d packages", dir, len(pkgs))
		}
		for _, p := range pkgs {
			for _, imp := range p.Imports {
				if (imp == "testing" || strings.HasPrefix(imp, "testing/")) && !testingHarnesses[p.ImportPath] {
					t.Errorf("%s imports %s outside its _test files: only the harnesses named in testingHarnesses may", p.ImportPath, imp)
				}
			}
		}
	}
}

// layer ranks the module's packages: a package may import only packages of
// its own layer or a lower one (a larger number). The thin mains
// (cmd/<binary>) → each binary's command layer (cmd/<binary>/..., which
// the main runs) → link/mcpserver → link → link/courier (held messages,
// the request ledger, wait) and link/start (starting agents), side by
// side: neither imports the other → link/deliver (the delivery core) → link/proto (the error codes every
// layer of link shares) → socket → schema → internal. The
// simulator (socket/sockettest) is in the socket layer, so the commands may
// use it for the demo and the bench (which binary may link what is
// TestDeps's job). adapters/* (host adapters in other languages, embedded
// for 'herdr-link config') import nothing of the module.
func layer(path string) int {
	rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
	if _, inside, ok := commandOf(rel); ok {
		if inside {
			return 1
		}
		return 0
	}
	// The longest prefix decides: link/courier, link/start, link/deliver
	// and link/proto sit below link; link/courier and link/start share a
	// layer.
	best, longest := -1, 0
	for i, prefix := range []string{"scripts", "link/mcpserver", "link", "link/courier", "link/deliver", "link/proto", "socket", "schema", "internal", "adapters"} {
		if (rel == prefix || strings.HasPrefix(rel, prefix+"/")) && len(prefix) > longest {
			best, longest = i+2, len(prefix)
		}
	}
	if rel == "link/start" || strings.HasPrefix(rel, "link/start/") {
		return layer(module + "/link/courier")
	}
	return best
}

// commandOf parses a module-relative path under cmd/: the binary's name and
// whether the path is inside its command layer (not its main).
func commandOf(rel string) (bin string, inside, ok bool) {
	rest, ok := strings.CutPrefix(rel, "cmd/")
	if !ok {
		return "", false, false
	}
	bin, sub, _ := strings.Cut(rest, "/")
	return bin, sub != "", true
}

// crossCommand says why a package of one binary's command layer must not
// import imp, or "": a command's product code uses only its own binary's
// command packages (tests may drive another binary's, in-process).
func crossCommand(from, imp string) string {
	fromBin, _, okFrom := commandOf(strings.TrimPrefix(from, module+"/"))
	impBin, _, okImp := commandOf(strings.TrimPrefix(imp, module+"/"))
	if okFrom && okImp && fromBin != impBin {
		return from + " imports " + imp + ": another binary's command code (only tests may)"
	}
	return ""
}

// sides are the packages that share a layer and stand side by side:
// neither imports the other.
var sides = []string{module + "/link/courier", module + "/link/start"}

// crossSide says why from must not import imp, or "": one side importing
// the other.
func crossSide(from, imp string) string {
	side := func(p string) int {
		return slices.IndexFunc(sides, func(s string) bool { return p == s || strings.HasPrefix(p, s+"/") })
	}
	if f, i := side(from), side(imp); f >= 0 && i >= 0 && f != i {
		return from + " imports " + imp + ": link/courier and link/start stand side by side"
	}
	return ""
}

func TestLayering(t *testing.T) {
	pkgs := goList(t, module+"/...")
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		from := layer(p.ImportPath)
		if from < 0 {
			t.Errorf("%s is in no layer: add it to layer()", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") && imp != module {
				continue
			}
			if to := layer(imp); to < from {
				t.Errorf("%s imports %s, against the layering cmd/<binary> → its command packages → link/mcpserver → link → link/courier, link/start → link/deliver → link/proto → socket → schema → internal", p.ImportPath, imp)
			}
			if why := crossCommand(p.ImportPath, imp); why != "" {
				t.Error(why)
			}
			if why := crossSide(p.ImportPath, imp); why != "" {
				t.Error(why)
			}
		}
		for _, e := range simulatorLayering(p.ImportPath, p.Imports) {
			t.Error(e)
		}
	}
}

const sim = module + "/socket/sockettest"

// simImports is the inside of the simulator: which of its packages each
// may import. The request path runs down it: the front (connection,
// framing, faults, dispatch) → reqcheck (the request check) → herdrstate
// (Herdr's state and semantics) → receiver (the program reading a pane)
// and program (a real one, which ptypane runs in a PTY). Nothing imports
// upwards: the state never sees the server, the receiver never the world.
var simImports = map[string][]string{
	sim:                 {sim + "/reqcheck", sim + "/herdrstate", sim + "/receiver", sim + "/program"},
	sim + "/reqcheck":   {},
	sim + "/herdrstate": {sim + "/receiver", sim + "/program"},
	sim + "/receiver":   {},
	sim + "/program":    {},
	sim + "/ptypane":    {sim + "/program"},
	sim + "/simtest":    {sim},
}

// simulatorLayering checks one package's imports against simImports, and
// two rules besides: below the front no simulator package touches a
// connection (net), and none but simtest imports testing.
func simulatorLayering(path string, imports []string) []string {
	if path != sim && !strings.HasPrefix(path, sim+"/") {
		return nil
	}
	allowed, ok := simImports[path]
	if !ok {
		return []string{path + " is in no layer of the simulator: add it to simImports"}
	}
	var errs []string
	for _, imp := range imports {
		switch {
		case imp == "testing" || strings.HasPrefix(imp, "testing/"):
			if path != sim+"/simtest" {
				errs = append(errs, path+" imports "+imp+": only simtest (and _test files) may")
			}
		case imp == "net" && path != sim && path != sim+"/simtest":
			errs = append(errs, path+" imports net: only the front (socket/sockettest) speaks to connections")
		case imp == sim || strings.HasPrefix(imp, sim+"/"):
			if !slices.Contains(allowed, imp) {
				errs = append(errs, path+" imports "+imp+", against the simulator's layering (simImports)")
			}
		}
	}
	return errs
}
