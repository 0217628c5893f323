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
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", append([]string{"list", "-json"}, args...)...).Output()
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

// TestDeps: the MCP server binary links neither the testing package nor a
// JSON Schema validator library (start-up cost), whatever it embeds for
// the demo and the bench.
func TestDeps(t *testing.T) {
	pkgs := goList(t, ".")
	if len(pkgs) != 1 {
		t.Fatalf("go list: %d packages", len(pkgs))
	}
	for _, d := range pkgs[0].Deps {
		switch {
		case d == "testing", strings.HasPrefix(d, "testing/"):
			t.Errorf("herdr-link links %s", d)
		case strings.Contains(d, "jsonschema"):
			t.Errorf("herdr-link links a JSON Schema library: %s", d)
		case d == module+"/socket/sockettest/simtest", d == module+"/internal/schemacheck":
			t.Errorf("herdr-link links the test helper %s", d)
		}
	}
}

// layer ranks the module's packages: a package may import only packages of
// its own layer or a lower one (a larger number). cmd → link/mcpserver →
// link → socket → schema → internal. The simulator (socket/sockettest) is
// in the socket layer, so cmd may use it for the demo and the bench.
// adapters/* (host adapters in other languages, embedded for 'herdr-link
// config') import nothing of the module.
func layer(path string) int {
	rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
	for i, prefix := range []string{"cmd", "link/mcpserver", "link", "socket", "schema", "internal", "adapters"} {
		if rel == prefix || strings.HasPrefix(rel, prefix+"/") {
			return i
		}
	}
	return -1
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
				t.Errorf("%s imports %s, against the layering cmd → link/mcpserver → link → socket → schema → internal", p.ImportPath, imp)
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
