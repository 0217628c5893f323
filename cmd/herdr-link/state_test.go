package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestNoMutablePackageState: a library package (every package of the
// module but the commands' main packages) keeps no mutable state at
// package level; state lives on values (a Client, a Server, a Link) that
// their owner creates and can have two of. A package-level variable
// declared in a non-test file
//
//   - is never assigned (itself, or an element or field of it),
//     incremented, deleted from, cleared or handed out by address (&x), in
//     any file of the package, tests included (a test hook is package
//     state too), except in an init function, which runs once before
//     anything can observe the variable; and
//   - is not itself synchronised state: a sync.Mutex, RWMutex, Map or
//     Cond, or a sync/atomic value, exists only to be mutated.
//
// Allowed, because they hold nothing a caller can observe: sync.Once and
// the sync.OnceFunc/OnceValue/OnceValues results (lazy initialisation of
// a value that never changes after), and sync.Pool (a cache of free
// buffers). The check is syntactic (go/ast): method calls on a variable
// (a map's element through a method, say) are not seen, which the type
// rule above covers for the standard library's mutable types.
func TestNoMutablePackageState(t *testing.T) {
	root := "../.."
	dirs := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch name := d.Name(); {
			case name == ".git", name == "testdata", name == "node_modules", path != root && strings.HasPrefix(name, "."):
				return filepath.SkipDir
			case path != root && fileExists(filepath.Join(path, "go.mod")):
				return filepath.SkipDir // a nested module has its own rules
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			dirs[filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var sorted []string
	for d := range dirs {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted)
	checked := 0
	seen := map[string]bool{}
	for _, dir := range sorted {
		rel, _ := filepath.Rel(root, dir)
		for _, f := range mutableState(t, dir) {
			key := filepath.ToSlash(rel) + "." + f.name
			if _, ok := pendingState[key]; ok {
				seen[key] = true
				continue
			}
			t.Errorf("%s: %s", filepath.ToSlash(rel), f.msg)
		}
		checked++
	}
	for key := range pendingState {
		if !seen[key] {
			t.Errorf("%s keeps no mutable package state any more: remove it from pendingState", key)
		}
	}
	if checked < 15 {
		t.Fatalf("checked only %d packages", checked)
	}
}

// pendingState lists the package variables of the simulator, a test double
// whose split into packages of its own is under way; each goes onto the
// values of the new packages there. The list may only shrink.
var pendingState = map[string]string{
	"socket/sockettest/simtest.checker": "the schema validator shared by a test process's servers, loaded once",
	"socket/sockettest/simtest.loadErr": "the error of loading it",
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// pkgVar is a package-level variable of a non-test file.
type pkgVar struct {
	spec *ast.ValueSpec
	pos  token.Position
}

// finding is one violation: the variable and the message.
type finding struct{ name, msg string }

// mutableState returns the violations of the rule in the package in dir
// (none for a main package).
func mutableState(t *testing.T, dir string) []finding {
	t.Helper()
	fset := token.NewFileSet()
	matches, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var files []*ast.File
	var tests []bool
	pkgName := ""
	for _, m := range matches {
		f, err := parser.ParseFile(fset, m, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		isTest := strings.HasSuffix(m, "_test.go")
		if !isTest {
			pkgName = f.Name.Name
		}
		files, tests = append(files, f), append(tests, isTest)
	}
	if pkgName == "" || pkgName == "main" {
		return nil
	}
	vars := map[string]pkgVar{}
	for i, f := range files {
		if tests[i] || f.Name.Name != pkgName {
			continue
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for _, n := range vs.Names {
					if n.Name != "_" {
						vars[n.Name] = pkgVar{vs, fset.Position(n.Pos())}
					}
				}
			}
		}
	}
	var out []finding
	for name, v := range vars {
		if kind := syncState(v.spec); kind != "" {
			out = append(out, finding{name, v.pos.String() + ": package-level " + name + " is " + kind + ": keep it on a value"})
		}
	}
	for _, f := range files {
		out = append(out, mutations(fset, f, vars, pkgName)...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].msg < out[j].msg })
	return out
}

// rootVar returns the package-level variable e writes through (x, x.f,
// x[i], *x; pkg.X from an external test package).
func rootVar(e ast.Expr, vars map[string]pkgVar, pkgName string, external bool) (string, bool) {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && external && id.Name == pkgName {
				_, isVar := vars[x.Sel.Name]
				return x.Sel.Name, isVar
			}
			e = x.X
		case *ast.Ident:
			if external {
				return "", false
			}
			_, isVar := vars[x.Name]
			// A local of the same name shadows it: the parser resolved the
			// identifier to a declaration inside a function.
			if isVar && x.Obj != nil && x.Obj.Kind == ast.Var {
				if vs, ok := x.Obj.Decl.(*ast.ValueSpec); ok && vs == vars[x.Name].spec {
					return x.Name, true
				}
				return "", false
			}
			return x.Name, isVar
		default:
			return "", false
		}
	}
}

// syncState names the synchronised type of a variable's declaration, or
// "".
func syncState(vs *ast.ValueSpec) string {
	exprs := []ast.Expr{vs.Type}
	for _, v := range vs.Values {
		switch v := v.(type) {
		case *ast.CompositeLit:
			exprs = append(exprs, v.Type)
		case *ast.CallExpr:
			if id, ok := v.Fun.(*ast.Ident); ok && id.Name == "new" && len(v.Args) == 1 {
				exprs = append(exprs, v.Args[0])
			}
		}
	}
	for _, e := range exprs {
		if s, ok := e.(*ast.StarExpr); ok {
			e = s.X
		}
		if ix, ok := e.(*ast.IndexExpr); ok { // atomic.Pointer[T]
			e = ix.X
		}
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			continue
		}
		pkg, _ := sel.X.(*ast.Ident)
		switch {
		case pkg == nil:
		case pkg.Name == "atomic":
			return "a sync/atomic value"
		case pkg.Name == "sync" && (sel.Sel.Name == "Mutex" || sel.Sel.Name == "RWMutex" || sel.Sel.Name == "Map" || sel.Sel.Name == "Cond"):
			return "a sync." + sel.Sel.Name
		}
	}
	return ""
}

// mutations returns the writes to vars in f.
func mutations(fset *token.FileSet, f *ast.File, vars map[string]pkgVar, pkgName string) []finding {
	var out []finding
	external := f.Name.Name != pkgName // an _test package
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if ok && fn.Recv == nil && fn.Name.Name == "init" && !external {
			continue
		}
		ast.Inspect(d, func(n ast.Node) bool {
			var targets []ast.Expr
			switch n := n.(type) {
			case *ast.AssignStmt:
				if n.Tok != token.DEFINE {
					targets = n.Lhs
				}
			case *ast.IncDecStmt:
				targets = []ast.Expr{n.X}
			case *ast.UnaryExpr:
				// &x hands the variable out to be written (flag.IntVar(&x));
				// &x[i] and &x.f, the usual way to read an element in
				// place, are not counted.
				if _, whole := n.X.(*ast.Ident); n.Op == token.AND && whole {
					targets = []ast.Expr{n.X}
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "delete" || id.Name == "clear") && len(n.Args) > 0 {
					targets = n.Args[:1]
				}
			}
			for _, e := range targets {
				if name, ok := rootVar(e, vars, pkgName, external); ok {
					out = append(out, finding{name, fset.Position(e.Pos()).String() + ": package-level " + name + " is mutated: keep it on a value (or set it in init)"})
				}
			}
			return true
		})
	}
	return out
}
