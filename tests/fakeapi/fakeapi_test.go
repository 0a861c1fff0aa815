package fakeapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// These tests run the REAL claude CLI against the fake API: they prove the
// harness the rest of the e2e suite stands on.

// line is the part of a stream-json line these tests look at.
type line struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Message struct {
		ID      string `json:"id"`
		Content []struct {
			Type  string         `json:"type"`
			Text  string         `json:"text"`
			Name  string         `json:"name"`
			Input map[string]any `json:"input"`
		} `json:"content"`
		Usage map[string]any `json:"usage"`
	} `json:"message"`
	// system/api_retry
	Attempt     int `json:"attempt"`
	ErrorStatus int `json:"error_status"`
	// result
	IsError        bool   `json:"is_error"`
	APIErrorStatus *int   `json:"api_error_status"`
	Result         string `json:"result"`
	ModelUsage     map[string]struct {
		ContextWindow int64 `json:"contextWindow"`
	} `json:"modelUsage"`
	Model string `json:"model"` // system/init
}

type cli struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer

	mu    sync.Mutex
	lines []line
	eof   chan struct{}
}

// startCLI runs claude in dir with the prompt as a stream-json user message
// on stdin, and closes stdin once the result line is read, so the CLI exits.
//
// Closing stdin right after the prompt is NOT equivalent (measured): the CLI
// then exits as soon as the turn ends, without flushing stdout, and with
// multi-MB lines the reader sees a truncated line and no result (exit 0).
func startCLI(t *testing.T, srv *fakeapi.Server, dir, prompt string, args ...string) *cli {
	t.Helper()
	// A guard against a wedged CLI, not an assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	argv := append([]string{"-p", "--input-format", "stream-json", "--output-format", "stream-json",
		"--verbose", "--dangerously-skip-permissions"}, args...)
	c := &cli{cmd: exec.CommandContext(ctx, claudetest.Bin(t), argv...), eof: make(chan struct{})}
	c.cmd.Dir = dir
	c.cmd.Env = claudetest.Env(t, srv.URL())
	c.cmd.Stderr = &c.stderr
	stdin, err := c.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start claude: %v", err)
	}
	t.Cleanup(func() { _ = c.cmd.Process.Kill(); _ = c.cmd.Wait() })
	go func() {
		defer close(c.eof)
		br := bufio.NewReader(stdout)
		for {
			b, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(b)) > 0 {
				var l line
				if jerr := json.Unmarshal(b, &l); jerr != nil {
					t.Errorf("non-JSON stdout line: %q", b)
				}
				c.mu.Lock()
				c.lines = append(c.lines, l)
				c.mu.Unlock()
				if l.Type == "result" {
					_ = stdin.Close()
				}
			}
			if err != nil {
				return
			}
		}
	}()
	msg, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt}})
	if _, err := stdin.Write(append(msg, '\n')); err != nil {
		t.Fatalf("write prompt: %v", err)
	}
	return c
}

// wait returns the lines and the exit code once the CLI has exited.
func (c *cli) wait(t *testing.T) ([]line, int) {
	t.Helper()
	<-c.eof
	err := c.cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("wait claude: %v", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.Failed() {
		t.Logf("stderr: %s", c.stderr.String())
	}
	return c.lines, code
}

func (c *cli) snapshot() []line {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]line(nil), c.lines...)
}

func only(lines []line, typ, subtype string) []line {
	var out []line
	for _, l := range lines {
		if l.Type == typ && (subtype == "" || l.Subtype == subtype) {
			out = append(out, l)
		}
	}
	return out
}

func lastResult(t *testing.T, lines []line) line {
	t.Helper()
	rs := only(lines, "result", "")
	if len(rs) == 0 {
		t.Fatalf("no result line in %d lines", len(lines))
	}
	return rs[len(rs)-1]
}

func TestCLIToolsRunForReal(t *testing.T) {
	dir := claudetest.GitRepo(t)
	const prompt = "phase one: create a.txt"
	srv := start(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Name: "one", Match: "phase one",
		Turns: []fakeapi.Turn{
			{
				Usage: fakeapi.Usage{Input: 3000, CacheRead: 20000, CacheCreation: 500, Output: 40},
				Blocks: []fakeapi.Block{
					fakeapi.Text("I will write a file."),
					fakeapi.Write(filepath.Join(dir, "a.txt"), "hello\n"),
					fakeapi.Bash("cat a.txt > b.txt && echo bash-ran"),
				},
			},
			{Usage: fakeapi.Usage{Input: 4000, CacheRead: 23500, Output: 12}, Blocks: []fakeapi.Block{fakeapi.Text("All done.")}},
		},
	}}})

	lines, code := startCLI(t, srv, dir, prompt, "--model", "claude-sonnet-4-5").wait(t)
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}

	t.Run("tools changed the repo", func(t *testing.T) {
		for name, want := range map[string]string{"a.txt": "hello\n", "b.txt": "hello\n"} {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || string(got) != want {
				t.Errorf("%s = %q, %v; want %q", name, got, err, want)
			}
		}
		if st := claudetest.Git(t, dir, "status", "--porcelain"); !strings.Contains(st, "a.txt") {
			t.Errorf("git status does not show the new file: %q", st)
		}
	})
	t.Run("one response is three assistant lines with one id", func(t *testing.T) {
		as := only(lines, "assistant", "")
		if len(as) != 4 {
			t.Fatalf("%d assistant lines, want 3 + 1", len(as))
		}
		for i, want := range []string{"text", "tool_use", "tool_use"} {
			if as[i].Message.ID != as[0].Message.ID || len(as[i].Message.Content) != 1 || as[i].Message.Content[0].Type != want {
				t.Errorf("line %d: id %s content %+v", i, as[i].Message.ID, as[i].Message.Content)
			}
		}
		if as[3].Message.ID == as[0].Message.ID {
			t.Errorf("second response reuses id %s", as[0].Message.ID)
		}
	})
	t.Run("scripted usage appears in the stream", func(t *testing.T) {
		u := only(lines, "assistant", "")[0].Message.Usage
		for k, want := range map[string]float64{"input_tokens": 3000, "cache_read_input_tokens": 20000, "cache_creation_input_tokens": 500} {
			if u[k] != want {
				t.Errorf("usage[%s] = %v, want %v", k, u[k], want)
			}
		}
	})
	t.Run("result and model window", func(t *testing.T) {
		r := lastResult(t, lines)
		if r.Subtype != "success" || r.IsError || r.Result != "All done." {
			t.Errorf("result %+v", r)
		}
		if mu, ok := r.ModelUsage["claude-sonnet-4-5"]; !ok || mu.ContextWindow != 200000 {
			t.Errorf("modelUsage = %+v, want claude-sonnet-4-5 contextWindow 200000", r.ModelUsage)
		}
	})
	t.Run("requests recorded", func(t *testing.T) {
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		for i, r := range reqs {
			if r.Conversation != "one" || r.Session != 0 || r.Turn != i || r.FirstUser != prompt || r.Model != "claude-sonnet-4-5" {
				t.Errorf("request %d = conv %q session %d turn %d first %q model %q", i, r.Conversation, r.Session, r.Turn, r.FirstUser, r.Model)
			}
		}
		if reqs[0].LastUser != prompt {
			t.Errorf("first LastUser = %q", reqs[0].LastUser)
		}
		if rs := reqs[1].ToolResults; len(rs) != 2 || !strings.Contains(rs[0], "File created") || !strings.Contains(rs[1], "bash-ran") {
			t.Errorf("tool results = %q", rs)
		}
		if got := srv.Sessions(); len(got) != 1 || got[0] != prompt {
			t.Errorf("sessions = %q", got)
		}
		for _, o := range srv.Others() {
			if !o.Known {
				t.Errorf("CLI called an endpoint the fake does not know: %s %s", o.Method, o.Path)
			}
		}
	})
}

// Two sessions of the same phase (a restart) bind two conversations in order;
// the default model reports its 1M window.
func TestCLIRestartBindsNextConversation(t *testing.T) {
	dir := claudetest.GitRepo(t)
	srv := start(t, fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "s0", Match: "phase two", Turns: []fakeapi.Turn{{Blocks: []fakeapi.Block{fakeapi.Bash("echo s0 >> log.txt")}}}},
		{Name: "s1", Match: "phase two", Turns: []fakeapi.Turn{{Blocks: []fakeapi.Block{fakeapi.Bash("echo s1 >> log.txt")}}}},
	}})
	for _, prompt := range []string{"phase two: go", "Checkpoint: resume.\n\nphase two: go"} {
		lines, code := startCLI(t, srv, dir, prompt).wait(t)
		if r := lastResult(t, lines); code != 0 || r.IsError {
			t.Fatalf("exit %d result %+v", code, r)
		}
		// The default model moves with the CLI (2.1.197: claude-opus-4-8[1m],
		// 2.1.330: claude-opus-5-5); both have a 1M window.
		init := only(lines, "system", "init")
		if len(init) != 1 || init[0].Model == "" {
			t.Fatalf("init = %+v", init)
		}
		if mu := lastResult(t, lines).ModelUsage[init[0].Model]; mu.ContextWindow != 1_000_000 {
			t.Errorf("default model %s window = %d", init[0].Model, mu.ContextWindow)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "log.txt")); string(got) != "s0\ns1\n" {
		t.Errorf("log.txt = %q", got)
	}
	var convs []string
	for _, r := range srv.Requests() {
		convs = append(convs, r.Conversation)
	}
	if got := strings.Join(convs, ","); got != "s0,s0,s1,s1" {
		t.Errorf("conversations per request = %s", got)
	}
}

func TestCLIOverloadedRetries(t *testing.T) {
	dir := claudetest.GitRepo(t)
	srv := start(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Match: "busy",
		Turns: []fakeapi.Turn{{Status: 529, Repeat: 1, Blocks: []fakeapi.Block{fakeapi.Text("made it")}}},
	}}})
	lines, code := startCLI(t, srv, dir, "busy").wait(t)
	retries := only(lines, "system", "api_retry")
	if len(retries) != 1 || retries[0].Attempt != 1 || retries[0].ErrorStatus != 529 {
		t.Errorf("api_retry lines = %+v", retries)
	}
	if r := lastResult(t, lines); code != 0 || r.IsError || r.Result != "made it" {
		t.Errorf("exit %d result %+v", code, r)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestCLIPromptTooLong(t *testing.T) {
	dir := claudetest.GitRepo(t)
	srv := start(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Match: "big", Turns: []fakeapi.Turn{{Status: 400}},
	}}})
	lines, code := startCLI(t, srv, dir, "big").wait(t)
	r := lastResult(t, lines)
	if code != 1 || !r.IsError || r.APIErrorStatus == nil || *r.APIErrorStatus != 400 ||
		!strings.Contains(r.Result, "Prompt is too long") {
		t.Errorf("exit %d result %+v", code, r)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests: a 400 must not be retried", n)
	}
}

// A hung API leaves the CLI silent: nothing after init, no retry lines. Close
// must still return (it ends the hang).
func TestCLIHangIsSilent(t *testing.T) {
	dir := claudetest.GitRepo(t)
	srv, err := fakeapi.Start(fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Match: "hang", Turns: []fakeapi.Turn{{Hang: true}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := startCLI(t, srv, dir, "hang")
	for len(srv.Requests()) == 0 {
		select {
		case <-c.eof:
			t.Fatalf("CLI ended before its request: %s", c.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	// Give the CLI a moment to say anything it would say; it must not.
	time.Sleep(1500 * time.Millisecond)
	lines := c.snapshot()
	if len(lines) != 1 || lines[0].Subtype != "init" {
		t.Errorf("lines during a hang: %+v", lines)
	}
	if r := srv.Requests()[0]; r.Status != 0 {
		t.Errorf("hung request recorded status %d", r.Status)
	}
	srv.Close()
	_ = c.cmd.Process.Kill()
	<-c.eof
}

// A 2 MB Write travels as chunked input_json_delta and arrives whole.
func TestCLIHugeWrite(t *testing.T) {
	dir := claudetest.GitRepo(t)
	content := strings.Repeat("0123456789abcdef\n", 2<<20/17)
	srv := start(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Match: "big", Turns: []fakeapi.Turn{{Blocks: []fakeapi.Block{fakeapi.Write("big.txt", content)}}},
	}}})
	lines, code := startCLI(t, srv, dir, "big").wait(t)
	if r := lastResult(t, lines); code != 0 || r.IsError {
		t.Fatalf("exit %d result %+v", code, r)
	}
	got, err := os.ReadFile(filepath.Join(dir, "big.txt"))
	if err != nil || string(got) != content {
		t.Errorf("big.txt: %d bytes, %v; want %d", len(got), err, len(content))
	}
}
