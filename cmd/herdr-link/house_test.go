package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// House rules of the repository: no hand-written Go file over
// 15 KB, and no function over 80 lines unless its doc comment gives the
// reason on a line that starts with "Long:".
const (
	maxFileBytes = 15 << 10
	maxFuncLines = 80
)

func TestHouseRules(t *testing.T) {
	root := "../.."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "node_modules" || name == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(src[:min(len(src), 512)], []byte("Code generated")) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if len(src) > maxFileBytes {
			t.Errorf("%s is %d bytes, over %d: split it by job", rel, len(src), maxFileBytes)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if lines <= maxFuncLines {
				continue
			}
			if fn.Doc != nil && strings.Contains(fn.Doc.Text(), "Long:") {
				continue
			}
			t.Errorf("%s:%d: %s is %d lines, over %d, and its doc comment gives no \"Long:\" reason", rel, fset.Position(fn.Pos()).Line, fn.Name.Name, lines, maxFuncLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
