// Command fakemodel serves a scripted fake model API on 127.0.0.1 until
// SIGINT/SIGTERM (a development helper, not part of herdr-link):
//
//	go run ./internal/fakemodel/cmd [-addr 127.0.0.1:0] [-script FILE] [-log FILE] [-bodies DIR]
//
// It prints FAKEMODEL_URL=http://127.0.0.1:PORT on stdout. Point a host at
// it: ANTHROPIC_BASE_URL=$FAKEMODEL_URL (Claude Code), a Codex provider
// with base_url=$FAKEMODEL_URL/v1 and wire_api="responses", an OpenCode
// openai-compatible provider with baseURL=$FAKEMODEL_URL/v1. Without
// -script the model activates herdr-link, lists peers and finishes.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/herdr-link/herdr-link/e2e/internal/fakemodel"
	"github.com/herdr-link/herdr-link/internal/cliflag"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := cliflag.New("fakemodel [flags]", "Serves the Anthropic Messages, OpenAI Responses and Chat Completions APIs, scripted, on 127.0.0.1.", stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	scriptFile := fs.String("script", "", `script JSON file, e.g. {"steps":[{"call":"herdr_link"},{"text":"done"}]}`)
	logFile := fs.String("log", "", "write every request as a JSON line to this file (default stderr)")
	bodies := fs.String("bodies", "", "on exit, write each raw request body to DIR/NNN-API.json")
	if code, done := cliflag.Parse(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "fakemodel: no arguments expected")
		return 2
	}
	script := fakemodel.Script{Steps: []fakemodel.Step{{Call: fakemodel.Gateway}, {Call: fakemodel.Peers}, {Text: "done"}}}
	if *scriptFile != "" {
		s, err := fakemodel.LoadScript(*scriptFile)
		if err != nil {
			fmt.Fprintln(stderr, "fakemodel:", err)
			return 2
		}
		script = s
	}
	log := stderr
	if *logFile != "" {
		f, err := os.Create(*logFile)
		if err != nil {
			fmt.Fprintln(stderr, "fakemodel:", err)
			return 1
		}
		defer f.Close()
		log = f
	}
	srv, err := fakemodel.Start(fakemodel.Options{Script: script, Log: log, Addr: *addr, KeepBodies: *bodies != ""})
	if err != nil {
		fmt.Fprintln(stderr, "fakemodel:", err)
		return 1
	}
	fmt.Fprintf(stdout, "FAKEMODEL_URL=%s\n", srv.URL)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	<-ch
	srv.Close()
	if *bodies != "" {
		if err := os.MkdirAll(*bodies, 0o755); err != nil {
			fmt.Fprintln(stderr, "fakemodel:", err)
			return 1
		}
		for _, r := range srv.Requests() {
			if err := os.WriteFile(filepath.Join(*bodies, fmt.Sprintf("%03d-%s.json", r.Seq, r.API)), r.Body, 0o644); err != nil {
				fmt.Fprintln(stderr, "fakemodel:", err)
				return 1
			}
		}
	}
	for _, e := range srv.Errors() {
		fmt.Fprintln(stderr, "fakemodel: script:", e)
	}
	return 0
}
