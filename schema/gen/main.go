// Command gen writes package schema's generated files from Herdr's API
// schema document.
//
// Usage:
//
//	go run ./schema/gen [-in FILE|-] [-out DIR]
//	herdr api schema --json | go run ./schema/gen -out schema
//
// With no -in, or -in -, the document is read from stdin. The mapping rules
// are documented in package schema/internal/gen.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/herdr-link/herdr-link/schema/internal/gen"
)

func main() {
	in := flag.String("in", "-", "schema document to read, or - for stdin")
	out := flag.String("out", ".", "directory to write the generated files to")
	name := flag.String("name", "", "input name recorded in the header (default: the file's base name, or herdr-api.schema.json for stdin)")
	flag.Parse()
	if err := run(*in, *out, *name); err != nil {
		fmt.Fprintln(os.Stderr, "schema/gen:", err)
		os.Exit(1)
	}
}

func run(in, out, name string) error {
	var data []byte
	var err error
	if in == "-" {
		data, err = io.ReadAll(os.Stdin)
		if name == "" {
			name = "herdr-api.schema.json"
		}
	} else {
		data, err = os.ReadFile(in)
		if name == "" {
			name = filepath.Base(in)
		}
	}
	if err != nil {
		return err
	}
	files, err := gen.Generate(data, gen.Options{InputName: name})
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(out, n), files[n], 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "wrote %s (%d bytes)\n", filepath.Join(out, n), len(files[n]))
	}
	return nil
}
