// Command fakeapi serves a scripted fake Anthropic Messages API until SIGINT
// or SIGTERM, for demos and manual runs of the real Claude Code CLI:
//
//	fakeapi -script script.json -url-file /tmp/fakeapi.url &
//	ANTHROPIC_BASE_URL=$(cat /tmp/fakeapi.url) ANTHROPIC_API_KEY=test claude -p ...
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/debussy-dev/debussy/tests/fakeapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run serves until ctx ends.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakeapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scriptPath := fs.String("script", "", "JSON script file (required)")
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	urlFile := fs.String("url-file", "", "write the base URL to this file once listening")
	reqFile := fs.String("requests", "", "on exit, write the received requests (without bodies) as JSON lines here")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *scriptPath == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: fakeapi -script FILE [-addr 127.0.0.1:0] [-url-file F] [-requests F]")
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	script, err := fakeapi.LoadScript(*scriptPath)
	if err != nil {
		fmt.Fprintln(stderr, "fakeapi:", err)
		return 2
	}

	srv, err := fakeapi.StartWith(script, fakeapi.Options{Addr: *addr, Logger: log})
	if err != nil {
		fmt.Fprintln(stderr, "fakeapi:", err)
		return 1
	}
	if *urlFile != "" {
		if err := writeAtomic(*urlFile, []byte(srv.URL()+"\n")); err != nil {
			srv.Close()
			fmt.Fprintln(stderr, "fakeapi:", err)
			return 1
		}
	}
	fmt.Fprintln(stdout, srv.URL())

	<-ctx.Done()
	srv.Close()
	if *reqFile != "" {
		if err := writeRequests(*reqFile, srv.Requests()); err != nil {
			fmt.Fprintln(stderr, "fakeapi:", err)
			return 1
		}
	}
	return 0
}

// writeAtomic writes via rename so a poller never reads a half-written URL.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fakeapi-url-*")
	if err != nil {
		return fmt.Errorf("write url file: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write url file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write url file: %w", err)
	}
	return nil
}

func writeRequests(path string, reqs []fakeapi.Request) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write requests: %w", err)
	}
	enc := json.NewEncoder(f)
	for _, r := range reqs {
		r.Body = nil
		if err := enc.Encode(r); err != nil {
			_ = f.Close()
			return fmt.Errorf("write requests: %w", err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write requests: %w", err)
	}
	return nil
}
