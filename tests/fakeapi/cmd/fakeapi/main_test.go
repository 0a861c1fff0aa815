package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestServeScriptFile(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`{"conversations":[{"name":"a","match":"hi","turns":[{"blocks":[{"text":"hello"}]}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	urlFile, reqFile := filepath.Join(dir, "url"), filepath.Join(dir, "requests.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	code := make(chan int)
	go func() {
		code <- run(ctx, []string{"-script", script, "-url-file", urlFile, "-requests", reqFile}, &stdout, &stderr)
	}()

	var url []byte
	for len(url) == 0 {
		select {
		case c := <-code:
			t.Fatalf("exited %d: %s", c, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		url, _ = os.ReadFile(urlFile)
	}
	body := `{"model":"m","stream":false,"messages":[{"role":"user","content":"hi there"}]}`
	resp, err := http.Post(strings.TrimSpace(string(url))+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Content []struct{ Text string } `json:"content"`
	}
	err = json.NewDecoder(resp.Body).Decode(&msg)
	resp.Body.Close()
	if err != nil || len(msg.Content) != 1 || msg.Content[0].Text != "hello" {
		t.Errorf("reply %+v, %v", msg, err)
	}

	cancel()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d: %s", c, stderr.String())
	}
	reqs, err := os.ReadFile(reqFile)
	if err != nil || !strings.Contains(string(reqs), `"conversation":"a"`) || strings.Count(string(reqs), "\n") != 1 {
		t.Errorf("requests file: %s %v", reqs, err)
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no script", nil, 2},
		{"missing file", []string{"-script", "/nonexistent.json"}, 2},
		{"bad flag", []string{"-nope"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if got := run(context.Background(), tt.args, &out, &errOut); got != tt.want {
				t.Errorf("exit %d, want %d: %s", got, tt.want, errOut.String())
			}
		})
	}
}
