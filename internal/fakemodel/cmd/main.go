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
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/herdr-link/herdr-link/internal/fakemodel"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	scriptFile := flag.String("script", "", "script JSON file ({\"steps\":[{\"call\":\"herdr_link\"},{\"text\":\"done\"}]})")
	logFile := flag.String("log", "", "write every request as a JSON line to this file (default stderr)")
	bodies := flag.String("bodies", "", "also write each raw request body to DIR/NNN.json")
	flag.Parse()
	script := fakemodel.Script{Steps: []fakemodel.Step{{Call: fakemodel.Gateway}, {Call: fakemodel.Peers}, {Text: "done"}}}
	if *scriptFile != "" {
		s, err := fakemodel.LoadScript(*scriptFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakemodel:", err)
			os.Exit(2)
		}
		script = s
	}
	var log io.Writer = os.Stderr
	if *logFile != "" {
		f, err := os.Create(*logFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakemodel:", err)
			os.Exit(1)
		}
		defer f.Close()
		log = f
	}
	srv, err := fakemodel.Start(fakemodel.Options{Script: script, Log: log, Addr: *addr, KeepBodies: *bodies != ""})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(1)
	}
	fmt.Printf("FAKEMODEL_URL=%s\n", srv.URL)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	<-ch
	srv.Close()
	if *bodies != "" {
		_ = os.MkdirAll(*bodies, 0o755)
		for _, r := range srv.Requests() {
			_ = os.WriteFile(filepath.Join(*bodies, fmt.Sprintf("%03d-%s.json", r.Seq, r.API)), r.Body, 0o644)
		}
	}
}
