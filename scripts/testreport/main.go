// Command testreport reads `go test -json` events on stdin and prints what
// a maintainer needs from a run: each package's result line, the whole
// output of every failed test, and at the end every skipped test with the
// reason it gave, so that a clone without the material some tests need
// says which checks it did not run and why. It exits 1 when a test or a
// package failed.
//
//	go test -json ./... | go run ./scripts/testreport
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of test2json's output.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type skip struct{ pkg, test, reason string }

func main() {
	failed, err := report(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// report copies the summary of the events in r to w and says whether
// anything failed.
func report(r io.Reader, w io.Writer) (failed bool, err error) {
	outputs := map[[2]string][]string{}
	var skips []skip
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if json.Unmarshal(line, &ev) != nil || ev.Action == "" {
			// Not an event (a build error printed by go test): pass it on.
			fmt.Fprintln(w, string(line))
			continue
		}
		key := [2]string{ev.Package, ev.Test}
		switch ev.Action {
		case "output":
			outputs[key] = append(outputs[key], ev.Output)
		case "fail":
			failed = true
			if ev.Test != "" {
				fmt.Fprintf(w, "--- FAIL: %s (%s)\n", ev.Test, ev.Package)
			}
			for _, o := range outputs[key] {
				fmt.Fprint(w, o)
			}
			delete(outputs, key)
		case "skip":
			if ev.Test != "" {
				skips = append(skips, skip{ev.Package, ev.Test, skipReason(outputs[key])})
			} else {
				fmt.Fprintf(w, "?   \t%s\t[no test files]\n", ev.Package)
			}
			delete(outputs, key)
		case "pass":
			if ev.Test == "" {
				fmt.Fprintf(w, "ok  \t%s\t%.3fs\n", ev.Package, ev.Elapsed)
			}
			delete(outputs, key)
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	if len(skips) > 0 {
		sort.Slice(skips, func(i, j int) bool {
			if skips[i].pkg != skips[j].pkg {
				return skips[i].pkg < skips[j].pkg
			}
			return skips[i].test < skips[j].test
		})
		fmt.Fprintf(w, "\n%d tests skipped:\n", len(skips))
		for _, s := range skips {
			fmt.Fprintf(w, "  %s %s: %s\n", s.pkg, s.test, s.reason)
		}
	}
	return failed, nil
}

// skipReason picks the message a test gave t.Skip from its output: the
// last logged line before the "--- SKIP" line, without its file:line.
func skipReason(lines []string) string {
	reason := "(no reason given)"
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "--- SKIP") || strings.HasPrefix(t, "=== ") {
			continue
		}
		if i := strings.Index(t, ": "); i > 0 && strings.Contains(t[:i], ".go:") {
			t = t[i+2:]
		}
		reason = t
	}
	return reason
}
