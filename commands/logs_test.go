package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/internal/golden"
	"github.com/debussy-dev/debussy/state"
)

const fixtures = "../runner/testdata/fixtures"

// logsRun is a repository with run r1: phase 1 restarted once (two
// sessions), then phase 2 ran one.
func logsRun(t *testing.T, status state.Status) (dir string, store *state.Store) {
	return logsRunID(t, "r1", status)
}

func logsRunID(t *testing.T, id string, status state.Status) (dir string, store *state.Store) {
	t.Helper()
	dir = gitRepo(t)
	store = state.New(filepath.Join(dir, state.DirName))
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	l := &state.Ledger{Runs: []*state.Run{{ID: id, Plan: "plan/MASTER_PLAN.md", Status: status, StartedAt: t0,
		Phases: []*state.PhaseRecord{
			{ID: "1", Title: "Setup", Status: state.StatusCompleted, Sessions: 2, Restarts: 1, StartedAt: t0},
			{ID: "2", Title: "Build", Status: status, Sessions: 1, StartedAt: t0.Add(time.Minute)},
			{ID: "3", Title: "Docs", Status: state.StatusPending},
		}}}}
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	writeEvents(t, store, id, status)
	copySession(t, store, id, "1", 1, "multiblock-then-sigint")
	copySession(t, store, id, "1", 2, "success-simple")
	copySession(t, store, id, "2", 1, "success-sonnet-200k")
	return dir, store
}

// writeEvents writes the run's events.jsonl: what debussy told phase 1's
// first session and why each session ended.
func writeEvents(t *testing.T, store *state.Store, id string, status state.Status) {
	t.Helper()
	lines := []string{
		`{"event":"session_spawned","phase":"1","session":1}`,
		`{"event":"context_warning","phase":"1","session":1,"turn":1,"percent":73,"threshold":80}`,
		`{"event":"note","phase":"1","session":1,"turn":1,"tool":"Bash","chars":220}`,
		`{"event":"handoff_requested","phase":"1","session":1,"turn":1,"reason":"context 82.5 % of 200K ≥ 80 %","path":"/r/.debussy/runs/r1/phase-1/handoff-1.md"}`,
		`{"event":"tool_denied","phase":"1","session":1,"turn":1,"tool":"Bash","tool_use_id":"toolu_msg_fake_0_0_1795299173771_2"}`,
		`{"event":"nudge","phase":"1","session":1,"turn":2,"kind":"doom_loop","tool":"Bash","args":"sleep 30","count":3}`,
		`{"event":"handoff_written","phase":"1","session":1,"turn":2,"bytes":297}`,
		`{"event":"session_ended","phase":"1","session":1,"outcome":"stopped","reason":"context 82.5 % of 200K ≥ 80 %","exit_code":0}`,
		`{"event":"commit","phase":"1","kind":"restart"}`,
		`{"event":"session_spawned","phase":"1","session":2}`,
		`{"event":"session_ended","phase":"1","session":2,"outcome":"completed","reason":"","exit_code":0}`,
		`{"event":"gate","phase":"1","gate":"build","exit_code":0}`,
		`{"event":"phase_ended","phase":"1","status":"completed","error":""}`,
		`{"event":"session_spawned","phase":"2","session":1}`,
		`{"event":"session_ended","phase":"2","session":1,"outcome":"completed","reason":"","exit_code":0}`,
	}
	if status != state.StatusRunning {
		lines = append(lines, `{"event":"gate","phase":"2","gate":"test","exit_code":1}`,
			`{"event":"phase_ended","phase":"2","status":"`+string(status)+`","error":"gate test failed"}`)
	}
	if err := os.MkdirAll(store.RunDir(id), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(store.EventsPath(id), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copySession writes a recorded stream of the real CLI as a session's log.
func copySession(t *testing.T, store *state.Store, run, phase string, n int, fixture string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, fixture+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	writeSession(t, store, run, phase, n, data)
}

func writeSession(t *testing.T, store *state.Store, run, phase string, n int, data []byte) {
	t.Helper()
	dir := store.PhaseDir(run, phase)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("session-%d.jsonl", n))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLogs(t *testing.T) {
	dir, _ := logsRun(t, state.StatusCompleted)
	cases := []struct {
		name   string
		dir    string
		args   []string
		code   int
		golden string // stdout's golden file, for exit 0
		stderr string // a usage error's one line, contained
	}{
		{name: "the latest session of the latest phase", args: []string{"logs", "--log-text"}, golden: "logs-latest"},
		{name: "a phase's latest session", args: []string{"logs", "--phase", "1", "--log-text"}, golden: "logs-phase-1"},
		{name: "a phase's first session", args: []string{"logs", "--phase", "1", "--session", "1", "--run", "r1", "--log-text"}, golden: "logs-phase-1-session-1"},
		{name: "follow a run that has ended", args: []string{"logs", "--follow", "--log-text"}, golden: "logs-latest"},
		// A pipe (and CI) gets structure: names, paths, sizes, no text.
		{name: "piped: structure only", args: []string{"logs"}, golden: "logs-latest-structure"},
		{name: "unknown phase", args: []string{"logs", "--phase", "9"}, code: 2,
			stderr: "--phase 9: no session of it in run r1; phases with sessions: 1, 2"},
		{name: "a phase without a session", args: []string{"logs", "--phase", "3"}, code: 2,
			stderr: "phases with sessions: 1, 2"},
		{name: "session out of range", args: []string{"logs", "--phase", "2", "--session", "2"}, code: 2,
			stderr: "--session 2: phase 2 of run r1 has 1 session"},
		{name: "session from 1", args: []string{"logs", "--session", "0"}, code: 2,
			stderr: "--session 0: sessions count from 1 (see debussy logs --help)"},
		{name: "unknown run", args: []string{"logs", "--run", "r9"}, code: 2, stderr: `no run "r9" in`},
		{name: "arguments", args: []string{"logs", "1"}, code: 2, stderr: "unexpected arguments: 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := dir
			if tc.dir != "" {
				d = tc.dir
			}
			code, out, stderr := invoke(t, d, nil, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, stderr)
			}
			if tc.golden != "" {
				golden.Check(t, filepath.Join("testdata", tc.golden+".golden"), []byte(strings.ReplaceAll(out, dir, "$REPO")))
				return
			}
			if out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("want one line on stderr containing %q, got stdout %q, stderr %q", tc.stderr, out, stderr)
			}
		})
	}
}

// With no runs yet, status, logs and report say so the same way and agree
// on exit 0: an answer, not a failure.
func TestNoRunsYetAgree(t *testing.T) {
	empty := gitRepo(t)
	want := "no runs yet in " + filepath.Join(empty, ".debussy") + " (start one with: debussy run MASTER_PLAN.md)"
	for _, cmd := range []string{"status", "logs", "report"} {
		code, out, stderr := invoke(t, empty, nil, cmd)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 0 saying %q", cmd, code, out, stderr, want)
		}
	}
}

// signalWriter is a locked buffer that says when it was first written to.
type signalWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first chan struct{}
	once  sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.once.Do(func() { close(w.first) })
	return w.buf.Write(p)
}

// --follow prints a session as it is written, goes on to the phase's next
// session and to the run's next phase, and stops when the run lets go of
// the lock — whenever the follower happens to look.
func TestLogsFollow(t *testing.T) {
	dir, store := logsRun(t, state.StatusRunning)
	// The run is at phase 1's first session, half written, its last line cut.
	l, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	run := l.Run("r1")
	run.Phases[0].Sessions, run.Phases[1].Sessions = 1, 0
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"phase-1/session-1.jsonl", "phase-1/session-2.jsonl", "phase-2/session-1.jsonl"} {
		if err := os.Remove(filepath.Join(store.RunDir("r1"), p)); err != nil {
			t.Fatal(err)
		}
	}
	first, err := os.ReadFile(filepath.Join(fixtures, "multiblock-then-sigint.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	half := len(first)/2 + 7
	writeSession(t, store, "r1", "1", 1, first[:half])
	release, _, err := store.Lock(state.LockInfo{PID: os.Getpid(), RunID: "r1", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}

	out := &signalWriter{first: make(chan struct{})}
	e := &Env{Stdout: out, Stderr: io.Discard, Dir: dir, Getenv: func(string) string { return "" }}
	done := make(chan error, 1)
	go func() {
		done <- e.logs(context.Background(), logsOptions{Follow: true, Text: true, Poll: time.Millisecond})
	}()
	<-out.first // the follower has read the ledger and opened session 1

	writeSession(t, store, "r1", "1", 1, first[half:])
	copySession(t, store, "r1", "1", 2, "success-simple")
	run.Phases[0].Sessions = 2
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	copySession(t, store, "r1", "2", 1, "success-sonnet-200k")
	run.Phases[1].Sessions = 1
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "logs-follow.golden"), []byte(strings.ReplaceAll(out.buf.String(), dir, "$REPO")))
}

// Ctrl-C ends --follow without an error.
func TestLogsFollowCancelled(t *testing.T) {
	dir, store := logsRun(t, state.StatusRunning)
	release, _, err := store.Lock(state.LockInfo{PID: os.Getpid(), RunID: "r1", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	out := &signalWriter{first: make(chan struct{})}
	e := &Env{Stdout: out, Stderr: io.Discard, Dir: dir, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.logs(ctx, logsOptions{Follow: true, Text: true, Poll: time.Millisecond}) }()
	<-out.first
	cancel()
	if err := <-done; err != nil {
		t.Errorf("cancelled --follow: %v", err)
	}
}

// The README's debussy logs examples run as written (a pipe's reader aside).
func TestReadmeLogsExamples(t *testing.T) {
	dir, _ := logsRunID(t, "20261121-2230-4f2c", state.StatusCompleted)
	ran := 0
	for _, b := range readmeBlocks(t) {
		if b.lang != "sh" || !strings.Contains(b.text, "debussy logs") {
			continue
		}
		for _, line := range strings.Split(b.text, "\n") {
			line, _, _ = strings.Cut(line, "#")
			line, _, _ = strings.Cut(line, "|")
			fields := strings.Fields(line)
			if len(fields) < 2 || fields[0] != "debussy" {
				continue
			}
			if code, out, stderr := invoke(t, dir, nil, fields[1:]...); code != 0 || !strings.Contains(out, "■ result") {
				t.Errorf("README %q: exit %d\n%s%s", line, code, out, stderr)
			}
			ran++
		}
	}
	if ran < 4 {
		t.Errorf("ran %d README logs examples, want 4", ran)
	}
}

// debussy logs judges a private key block whole, as every other writer
// does: the transcript prints the agent's text line by line, and the body
// lines of a PKCS8, encrypted PKCS8, PGP or PuTTY block alone look like
// nothing.
func TestLogsRedactsBlocks(t *testing.T) {
	body := "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\nNMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ\n"
	mac := "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b4b0b822cd15d6c15b0f00a08"
	texts := map[string]string{
		"pkcs8":     "-----BEGIN PRIVATE KEY-----\n" + body + "-----END PRIVATE KEY-----",
		"encrypted": "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + body + "-----END ENCRYPTED PRIVATE KEY-----",
		"pgp":       "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + body + "=twTO\n-----END PGP PRIVATE KEY BLOCK-----",
		"openssh":   "-----BEGIN OPENSSH PRIVATE KEY-----\n" + body + "-----END OPENSSH PRIVATE KEY-----",
		"ppk":       "PuTTY-User-Key-File-3: ssh-rsa\nPrivate-Lines: 3\n" + body + "Private-MAC: " + mac,
	}
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			dir := gitRepo(t)
			store := state.New(filepath.Join(dir, state.DirName))
			t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
			l := &state.Ledger{Runs: []*state.Run{{ID: "r1", Plan: "plan/MASTER_PLAN.md", Status: state.StatusCompleted, StartedAt: t0,
				Phases: []*state.PhaseRecord{{ID: "1", Title: "Keys", Status: state.StatusCompleted, Sessions: 1, StartedAt: t0}}}}}
			if err := store.Save(l); err != nil {
				t.Fatal(err)
			}
			msg, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{
				"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-8",
				"content": []map[string]string{{"type": "text", "text": "Here is the key:\n" + text + "\nkeep it safe"}},
				"usage":   map[string]int{"input_tokens": 6000, "output_tokens": 1}}, "session_id": "s1"})
			writeSession(t, store, "r1", "1", 1, append(msg, '\n'))
			code, out, stderr := invoke(t, dir, nil, "logs", "--log-text")
			if code != 0 {
				t.Fatalf("exit %d: %s%s", code, out, stderr)
			}
			for _, line := range strings.Split(body, "\n") {
				if line != "" && strings.Contains(out, line[:20]) {
					t.Errorf("a body line survives in debussy logs:\n%s", out)
					break
				}
			}
			if !strings.Contains(out, "keep it safe") || !strings.Contains(out, "[redacted]") {
				t.Errorf("the text around the block is lost:\n%s", out)
			}
		})
	}
}

// logs says token counts as people read them (360K), never raw (360000),
// and names the limit a warning was about.
func TestLogsTokensReadable(t *testing.T) {
	dir, store := logsRun(t, state.StatusCompleted)
	f, err := os.OpenFile(store.EventsPath("r1"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"event":"context_warning","phase":"2","session":1,"turn":1,"percent":36,"threshold":80,"tokens":360000,"at":400000,"by":"context_max_tokens"}` + "\n" +
		`{"event":"context_warning","phase":"2","session":1,"turn":2,"percent":71,"threshold":80,"tokens":142000,"at":160000}` + "\n")
	f.Close()
	code, out, stderr := invoke(t, dir, nil, "logs", "--phase", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"context at 360K tokens (handoff at 400K, the cap context_max_tokens)",
		"context at 142K tokens, 71 % (handoff at 160K, context_threshold 80 %)"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs does not say %q:\n%s", want, out)
		}
	}
	for _, raw := range []string{"360000", "400000", "142000"} {
		if strings.Contains(out, raw) {
			t.Errorf("logs prints the raw %s:\n%s", raw, out)
		}
	}
}
