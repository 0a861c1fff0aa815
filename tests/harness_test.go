package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// harness is one end-to-end scenario: a git repository holding a plan, the
// fake API serving a script, and the real claude CLI.
type harness struct {
	t    *testing.T
	Repo string
	API  *fakeapi.Server
	Env  []string
	runs *inFlight // Repo's debussy processes, for fsck
}

// inFlight is the debussy processes prepared in one repository and not yet
// waited for. fsck runs only when none is left: a run still going may be
// mid-commit, and a fsck beside it reports the commit whose object it did
// not scan but whose reflog entry it read as missing (a chaos second-run,
// refused by the lock, ended while the first run committed). A fsck put off
// runs at the next quiet wait, or when the test ends.
type inFlight struct {
	mu     sync.Mutex
	cmds   map[*exec.Cmd]bool
	putOff bool
}

func newInFlight(t *testing.T, fsck func()) *inFlight {
	f := &inFlight{cmds: map[*exec.Cmd]bool{}}
	t.Cleanup(func() {
		f.mu.Lock()
		putOff := f.putOff
		f.mu.Unlock()
		if putOff {
			fsck()
		}
	})
	return f
}

func (f *inFlight) add(cmd *exec.Cmd) {
	f.mu.Lock()
	f.cmds[cmd] = true
	f.mu.Unlock()
}

// ended says cmd was waited for and reports whether the repository is quiet
// now: true means fsck it.
func (f *inFlight) ended(cmd *exec.Cmd) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.cmds, cmd)
	f.putOff = len(f.cmds) > 0
	return !f.putOff
}

// phaseSpec describes one phase file of a generated plan.
type phaseSpec struct {
	ID, Title string
	Deps      []string
	Gates     []string // "name: `command`"
	Status    string   // table status; default "Not Started"
}

func newHarness(t *testing.T, script fakeapi.Script, phases []phaseSpec, config string) *harness {
	t.Helper()
	claude := claudetest.Bin(t)
	api, err := fakeapi.Start(script)
	if err != nil {
		t.Fatalf("start fake API: %v", err)
	}
	t.Cleanup(api.Close)
	h := &harness{t: t, Repo: claudetest.GitRepo(t), API: api}
	h.runs = newInFlight(t, h.fsck)
	t.Cleanup(h.explainFailure) // runs before the repository is removed
	h.Env = append(claudetest.Env(t, api.URL()), "DEBUSSY_CLAUDE_BIN="+claude)
	if dirs, ok := marksDirs.Load(t); ok {
		h.Env = append(h.Env, "DEBUSSY_SANDBOX_WRITE=["+strings.Join(dirs.([]string), ", ")+"]")
	}
	h.write(".gitignore", ".debussy/\n")
	if config != "" {
		h.write(".debussy.yaml", config)
	}
	var table strings.Builder
	table.WriteString("# E2E - Master Plan\n\n| Phase | Title | Focus | Risk | Status |\n|---|---|---|---|---|\n")
	for _, p := range phases {
		status := p.Status
		if status == "" {
			status = "Not Started"
		}
		fmt.Fprintf(&table, "| %s | [%s](phase-%s.md) | test | Low | %s |\n", p.ID, p.Title, p.ID, status)
		deps := "N/A"
		if len(p.Deps) > 0 {
			var ds []string
			for _, d := range p.Deps {
				ds = append(ds, fmt.Sprintf("[Phase %s](phase-%s.md)", d, d))
			}
			deps = strings.Join(ds, ", ")
		}
		var body strings.Builder
		fmt.Fprintf(&body, "# Phase %s: %s\n\n**Depends On:** %s\n\n## Tasks\n- [ ] do phase %s\n", p.ID, p.Title, deps, p.ID)
		if len(p.Gates) > 0 {
			body.WriteString("\n## Gates\n")
			for _, g := range p.Gates {
				fmt.Fprintf(&body, "- %s\n", g)
			}
		}
		h.write("plan/phase-"+p.ID+".md", body.String())
	}
	h.write("plan/MASTER_PLAN.md", table.String())
	claudetest.Git(t, h.Repo, "add", "-A")
	claudetest.Git(t, h.Repo, "commit", "-q", "-m", "add plan")
	return h
}

func (h *harness) write(rel, content string) {
	h.t.Helper()
	p := filepath.Join(h.Repo, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) exists(rel string) bool {
	_, err := os.Stat(filepath.Join(h.Repo, rel))
	return err == nil
}

// result is how one debussy invocation ended.
type result struct {
	Code           int
	Stdout, Stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.Code, r.Stdout, r.Stderr)
}

// command prepares `debussy args...` in the repository, for a test that
// acts on it while it runs: the -race build (see raceBinary).
func (h *harness) command(args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	h.t.Helper()
	return h.commandOf(raceBinary(h.t), args...)
}

// commandOf prepares `bin args...` in the repository.
func (h *harness) commandOf(bin string, args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = h.Repo
	cmd.Env = h.Env
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	h.runs.add(cmd)
	return cmd, &stdout, &stderr
}

// run runs debussy to the end (bounded so a hang fails the test).
func (h *harness) run(args ...string) result {
	h.t.Helper()
	cmd, stdout, stderr := h.commandOf(h.binaryFor(args), args...)
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("start debussy: %v", err)
	}
	return h.wait(cmd, stdout, stderr, 4*time.Minute)
}

func (h *harness) wait(cmd *exec.Cmd, stdout, stderr *syncBuffer, limit time.Duration) result {
	h.t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(limit):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		h.t.Fatalf("debussy %s did not end within %s\n--- stderr\n%s", strings.Join(cmd.Args[1:], " "), limit, stderr)
	}
	res := result{Stdout: stdout.String(), Stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		res.Code = exit.ExitCode()
	default:
		h.t.Fatalf("run debussy: %v", err)
	}
	h.t.Logf("debussy %s → exit %d\n%s", strings.Join(cmd.Args[1:], " "), res.Code, res.Stderr)
	if h.runs.ended(cmd) {
		h.fsck()
	} else {
		h.t.Logf("git fsck put off: another debussy of this test in %s has not been waited for", h.Repo)
	}
	return res
}

// fsck fails the test unless `git fsck --strict` finds the repository clean:
// every commit debussy made must be one a fsck-checking remote accepts.
func (h *harness) fsck() {
	h.t.Helper()
	out, err := exec.Command("git", "-C", h.Repo, "fsck", "--strict", "--no-dangling", "--no-progress").CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		h.t.Errorf("git fsck --strict after debussy: %v\n%s", err, out)
	}
}

func (h *harness) git(args ...string) string {
	h.t.Helper()
	return claudetest.Git(h.t, h.Repo, args...)
}

// status returns `debussy status --json` decoded.
func (h *harness) status() map[string]any {
	h.t.Helper()
	r := h.run("status", "--json")
	if r.Code != 0 {
		h.t.Fatalf("status: %s", r)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil {
		h.t.Fatalf("decode status: %v\n%s", err, r.Stdout)
	}
	return m
}

// sessionsOf returns the distinct sessions' first prompts whose text contains s.
func (h *harness) sessionsOf(s string) []string {
	var out []string
	for _, first := range h.API.Sessions() {
		if strings.Contains(first, s) {
			out = append(out, first)
		}
	}
	return out
}

// noOrphans fails if any process still runs in the repository (a tool's
// leftover child would have it as its working directory).
func (h *harness) noOrphans() {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := processesIn(h.Repo)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("processes left running in %s: %v", h.Repo, left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// processesIn lists "pid cmdline" of processes whose cwd is dir or below.
func processesIn(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", pid, "cwd"))
		if err != nil || !(cwd == dir || strings.HasPrefix(cwd, dir+"/")) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		out = append(out, pid+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

// proxyAPI puts a proxy before the fake API for the rest of the test:
// intercept sees every request first and returns true when it has dealt
// with it (answered, delayed to a cancel, dropped); the others go on to
// the fake API, its SSE replies streamed as they come.
func (h *harness) proxyAPI(intercept func(w http.ResponseWriter, r *http.Request) bool) {
	h.t.Helper()
	target, err := url.Parse(h.API.URL())
	if err != nil {
		h.t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !intercept(w, r) {
			rp.ServeHTTP(w, r)
		}
	}))
	h.t.Cleanup(srv.Close)
	h.Env = append(h.Env, "ANTHROPIC_BASE_URL="+srv.URL) // the last value of a key wins
}

// Script helpers.

func usage(tokens int64) fakeapi.Usage {
	return fakeapi.Usage{Input: tokens / 10, CacheRead: tokens - tokens/10}
}

func turn(tokens int64, blocks ...fakeapi.Block) fakeapi.Turn {
	return fakeapi.Turn{Usage: usage(tokens), Blocks: blocks}
}

func done(phase string) fakeapi.Block { return fakeapi.Bash("debussy done --phase " + phase) }

// phaseMatch is what identifies a phase's sessions in the prompt.
func phaseMatch(id string) string { return "phase-" + id + ".md -----" }

// syncBuffer is a bytes.Buffer a test may read while the process writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// explainFailure logs, for a failed test, every tool result of every
// session's raw stream: a flaky end-to-end failure is then told apart (a
// failed `debussy done`, a refused tool, a slow start) from the one log.
func (h *harness) explainFailure() {
	if !h.t.Failed() {
		return
	}
	paths, _ := filepath.Glob(filepath.Join(h.Repo, ".debussy", "runs", "*", "phase-*", "session-*.jsonl"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		name := filepath.Base(filepath.Dir(p)) + "/" + filepath.Base(p)
		for _, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, `"tool_result"`) {
				if len(l) > 600 {
					l = l[:600] + "…"
				}
				h.t.Logf("%s: %s", name, l)
			}
		}
		for _, early := range hooksBeforeTheirLine(data) {
			h.t.Logf("%s: %s came before the assistant line asking for its tool", name, early)
		}
	}
	// The stop's timeline: what was decided, asked of the runner, sent to claude.
	logs, _ := filepath.Glob(filepath.Join(h.Repo, ".debussy", "runs", "*", "events.jsonl"))
	var ev []byte
	for _, p := range logs {
		data, _ := os.ReadFile(p)
		ev = append(ev, data...)
	}
	for _, l := range strings.Split(string(ev), "\n") {
		for _, name := range stopTimeline {
			if strings.Contains(l, `"event":"`+name+`"`) {
				h.t.Logf("events.jsonl: %s", l)
			}
		}
	}
}

// stopTimeline names the events.jsonl records of a stop, decided to done.
var stopTimeline = []string{string(record.StopDecided), string(record.ToolDenied), string(record.HookStop),
	string(runner.MarkStopRequested), string(runner.MarkHookStopSent), string(runner.MarkHookStopIgnored), string(runner.MarkHookSlow),
	string(runner.MarkToolDrained), string(runner.MarkInterruptSent), string(runner.MarkInterruptAcked)}

// hooksBeforeTheirLine lists the tool hook calls of a raw session stream
// that came before the assistant line asking for their tool.
func hooksBeforeTheirLine(stream []byte) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range bytes.Split(stream, []byte("\n")) {
		var m struct {
			Type    string
			Message struct{ Content []struct{ Type, ID string } }
			Request struct {
				Input struct {
					Event     string `json:"hook_event_name"`
					ToolUseID string `json:"tool_use_id"`
				}
			}
		}
		if json.Unmarshal(l, &m) != nil {
			continue
		}
		for _, c := range m.Message.Content {
			if m.Type == "assistant" && c.Type == "tool_use" {
				seen[c.ID] = true
			}
		}
		if id := m.Request.Input.ToolUseID; m.Type == "control_request" && id != "" && !seen[id] {
			out = append(out, m.Request.Input.Event+" "+id)
		}
	}
	return out
}
