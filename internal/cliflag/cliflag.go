// Package cliflag gives herdr-link's and herdr-sim's commands the usual Go
// command-line conventions: -h and --help print the command's usage on
// standard output and exit 0; a bad flag prints the error and the usage on
// standard error and exits 2.
package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// New returns a flag set whose usage starts with synopsis (for example
// "herdr-sim demo [flags]") and an optional description, then lists the
// flags. Errors and usage go to stderr until Parse sees a help request.
func New(synopsis, description string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(synopsis, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: %s\n", synopsis)
		if description != "" {
			fmt.Fprintf(w, "\n%s\n", description)
		}
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(w, "\nflags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// Parse parses args. When it returns done, the caller returns code at once:
// 0 after printing the usage on stdout for -h/--help, 2 after a flag error
// (already reported on the flag set's output).
func Parse(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, done bool) {
	usage := fs.Usage
	fs.Usage = func() {} // printed below, on the stream that fits
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		out := fs.Output()
		fs.SetOutput(stdout)
		usage()
		fs.SetOutput(out)
		return 0, true
	default:
		usage()
		return 2, true
	}
}

// IsHelp reports whether arg asks for help the way Go commands accept it.
func IsHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help":
		return true
	}
	return false
}

// IsVersion reports whether arg asks for the version.
func IsVersion(arg string) bool {
	switch arg {
	case "-version", "--version":
		return true
	}
	return false
}

// ParseInterspersed is Parse for commands whose operands may come before
// their flags (`herdr-link config claude -bin /x`), as users type them:
// it parses flags wherever they stand and returns the operands in order.
// A "--" ends the flags; what follows it is all operands.
func ParseInterspersed(fs *flag.FlagSet, args []string, stdout io.Writer) (operands []string, code int, done bool) {
	for {
		if code, done := Parse(fs, args, stdout); done {
			return nil, code, true
		}
		rest := fs.Args()
		// flag.Parse stops at the first operand, and consumes a "--"
		// without a trace: find where it stopped in args to tell them apart.
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(operands, rest...), 0, false
		}
		if len(rest) == 0 {
			return operands, 0, false
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}
