package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/plans"
)

func TestRunPasses(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "marker"), []byte("in the gate's dir\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := plans.Gate{Name: "build", Command: "cat marker; echo done"}
	res := Run(context.Background(), dir, nil, g, time.Minute)
	if !res.Passed() || res.ExitCode != 0 || res.TimedOut || res.Err != nil {
		t.Errorf("got exit %d timed out %v err %v, want a pass", res.ExitCode, res.TimedOut, res.Err)
	}
	if want := "in the gate's dir\ndone\n"; res.Output != want {
		t.Errorf("output %q, want %q", res.Output, want)
	}
	if res.Gate != g {
		t.Errorf("gate %+v, want %+v", res.Gate, g)
	}
}

func TestRunFails(t *testing.T) {
	g := plans.Gate{Name: "test", Command: "echo one; echo two >&2; echo three; exit 3"}
	res := Run(context.Background(), t.TempDir(), nil, g, 0)
	if res.Passed() || res.ExitCode != 3 || res.TimedOut || res.Err != nil {
		t.Errorf("got exit %d timed out %v err %v, want exit 3", res.ExitCode, res.TimedOut, res.Err)
	}
	// stdout and stderr share one pipe, so their order is kept.
	if want := "one\ntwo\nthree\n"; res.Output != want {
		t.Errorf("output %q, want %q", res.Output, want)
	}
}

func TestRunCannotStart(t *testing.T) {
	g := plans.Gate{Name: "test", Command: "true"}
	res := Run(context.Background(), filepath.Join(t.TempDir(), "missing"), nil, g, 0)
	if res.Passed() || res.Err == nil {
		t.Fatalf("got exit %d err %v, want a start error", res.ExitCode, res.Err)
	}
	if !strings.HasPrefix(res.Err.Error(), "start gate test: ") {
		t.Errorf("error %q, want it to name the gate", res.Err)
	}
}

// TestRunGateTimeoutKillsGroup checks that a timeout kills every process
// the gate started, not only the shell.
func TestRunTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	ids := filepath.Join(dir, "ids")
	// The shell writes its pid (= its process group id) and the background
	// sleep's pid, atomically, then blocks.
	g := plans.Gate{Name: "hang", Command: "sleep 300 & echo $$ $! > ids.tmp && mv ids.tmp ids && sleep 300"}
	var res Result
	// A short timeout may fire before the shell got to write the ids on a
	// busy machine: retry with a longer one rather than assert on time.
	for timeout := 200 * time.Millisecond; ; timeout *= 2 {
		res = Run(context.Background(), dir, nil, g, timeout)
		if _, err := os.Stat(ids); err == nil {
			break
		}
		if timeout > time.Minute {
			t.Fatalf("the gate never wrote %s; last result %+v", ids, res)
		}
	}
	if !res.TimedOut || res.Passed() || res.Err != nil {
		t.Errorf("timed out %v err %v, want a timeout", res.TimedOut, res.Err)
	}
	if res.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("exit code %d, want %d", res.ExitCode, 128+int(syscall.SIGKILL))
	}
	data, err := os.ReadFile(ids)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data))
	if len(f) != 2 {
		t.Fatalf("ids file %q, want two pids", data)
	}
	pgid, err1 := strconv.Atoi(f[0])
	bg, err2 := strconv.Atoi(f[1])
	if err := errors.Join(err1, err2); err != nil || pgid <= 1 || bg <= 1 {
		t.Fatalf("ids file %q: %v", data, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }) // if the test fails
	// SIGKILL is delivered asynchronously and the orphans linger as zombies
	// until PID 1 reaps them: a member that is still alive (not a zombie)
	// after a generous wait is the failure.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := syscall.Kill(-pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			break
		}
		if err != nil {
			t.Fatalf("kill(-%d, 0) = %v, want ESRCH", pgid, err)
		}
		live, err := liveMembers(pgid)
		if err != nil {
			t.Fatal(err)
		}
		if len(live) == 0 {
			break // only zombies left: dead
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v of the gate's group %d outlived Run (the background sleep is %d)", live, pgid, bg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// liveMembers lists the processes of a process group that are not zombies.
// Without /proc it returns nil: the caller then relies on kill(-pgid, 0).
func liveMembers(pgid int) ([]int, error) {
	if runtime.GOOS != "linux" {
		return nil, nil
	}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var live []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 3 {
			return nil, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, stat)
		}
		if f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			live = append(live, pid)
		}
	}
	return live, nil
}

func TestRunKeepsTheTail(t *testing.T) {
	const lines = 5000 // about 24K of output, more than outputLimit
	var full strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&full, "%d\n", i)
	}
	if full.Len() <= outputLimit {
		t.Fatalf("test output is %d bytes, want more than %d", full.Len(), outputLimit)
	}
	g := plans.Gate{Name: "noisy", Command: fmt.Sprintf("i=1; while [ $i -le %d ]; do echo $i; i=$((i+1)); done; exit 1", lines)}
	res := Run(context.Background(), t.TempDir(), nil, g, 0)
	if res.ExitCode != 1 || res.Err != nil || res.TimedOut {
		t.Fatalf("exit %d err %v timed out %v, want exit 1", res.ExitCode, res.Err, res.TimedOut)
	}
	s := full.String()
	dropped := len(s) - outputLimit
	dropped += strings.IndexByte(s[dropped:], '\n') + 1 // the line the cut went through
	want := fmt.Sprintf("[… %d bytes before this were dropped]\n%s", dropped, s[dropped:])
	if res.Output != want {
		t.Errorf("output starts %q and is %d bytes, want it to start %q and be %d bytes",
			head(res.Output, 80), len(res.Output), head(want, 80), len(want))
	}
}

func head(s string, n int) string { return s[:min(n, len(s))] }

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{name: "empty", want: ""},
		{name: "under the limit", writes: []string{"ab", "cd"}, want: "abcd"},
		{name: "exactly the limit", writes: []string{"abcdefgh"}, want: "abcdefgh"},
		{name: "one big write", writes: []string{"0123456789ab"}, want: "[… 4 bytes before this were dropped]\n456789ab"},
		{name: "many small writes", writes: []string{"0123", "4567", "89", "ab"}, want: "[… 4 bytes before this were dropped]\n456789ab"},
		// The cut went through a token: its piece could pass for harmless
		// text, so the partial line goes too.
		{name: "a partial first line", writes: []string{"sk-ant-abcd\nok\n"}, want: "[… 12 bytes before this were dropped]\nok\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &tailBuffer{max: 8}
			for _, w := range tt.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := b.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSummaryAndEvidence(t *testing.T) {
	lint := Result{Gate: plans.Gate{Name: "lint", Command: "go vet ./..."}}
	test := plans.Gate{Name: "test", Command: "go test ./..."}
	var seventy strings.Builder
	for i := 1; i <= 70; i++ {
		fmt.Fprintf(&seventy, "line %d\n", i)
	}
	lastSixty := strings.TrimPrefix(seventy.String(), "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n")
	tests := []struct {
		name     string
		results  []Result
		summary  string
		evidence string
	}{
		{
			name: "failed after a passing gate",
			results: []Result{lint, {Gate: test, ExitCode: 1,
				Output: "ok  \tpkg/a\n--- FAIL: TestX (0.00s)\nFAIL\tpkg/b   0.01s\n"}},
			summary: "gate test (`go test ./...`) exit 1: FAIL pkg/b 0.01s",
			evidence: "The gate \"test\" failed.\n\nCommand: go test ./...\nExit code: 1\n" +
				"Output (last lines):\n```\nok  \tpkg/a\n--- FAIL: TestX (0.00s)\nFAIL\tpkg/b   0.01s\n```\n" +
				"(gate \"lint\" passed)\n",
		},
		{
			name:     "no output",
			results:  []Result{{Gate: test, ExitCode: 2}},
			summary:  "gate test (`go test ./...`) exit 2: (no output)",
			evidence: "The gate \"test\" failed.\n\nCommand: go test ./...\nExit code: 2\nOutput (last lines):\n```\n(no output)\n```\n",
		},
		{
			name:     "blank output",
			results:  []Result{{Gate: test, ExitCode: 2, Output: "\n \n\n"}},
			summary:  "gate test (`go test ./...`) exit 2: (no output)",
			evidence: "The gate \"test\" failed.\n\nCommand: go test ./...\nExit code: 2\nOutput (last lines):\n```\n(no output)\n```\n",
		},
		{
			name:     "long output keeps the last 60 lines",
			results:  []Result{{Gate: test, ExitCode: 1, Output: seventy.String()}},
			summary:  "gate test (`go test ./...`) exit 1: line 70",
			evidence: "The gate \"test\" failed.\n\nCommand: go test ./...\nExit code: 1\nOutput (last lines):\n```\n" + lastSixty + "```\n",
		},
		{
			name: "timed out",
			results: []Result{{Gate: test, ExitCode: 137, TimedOut: true, Duration: 30*time.Second + 400*time.Millisecond,
				Output: "=== RUN   TestSlow\n"}},
			summary: "gate test (`go test ./...`) timed out after 30s",
			evidence: "The gate \"test\" failed.\n\nCommand: go test ./...\nIt timed out after 30s and was killed.\n" +
				"Output (last lines):\n```\n=== RUN   TestSlow\n```\n",
		},
		{
			name:    "could not run",
			results: []Result{lint, {Gate: test, Err: errors.New("start gate test: chdir /nope: no such file or directory")}},
			summary: "gate test (`go test ./...`) could not run: start gate test: chdir /nope: no such file or directory",
			evidence: "The gate \"test\" failed.\n\nCommand: go test ./...\n" +
				"It could not run: start gate test: chdir /nope: no such file or directory\n" +
				"Output (last lines):\n```\n(no output)\n```\n(gate \"lint\" passed)\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Summary(tt.results); got != tt.summary {
				t.Errorf("summary\n got %q\nwant %q", got, tt.summary)
			}
			if got := Evidence(tt.results); got != tt.evidence {
				t.Errorf("evidence\n got %q\nwant %q", got, tt.evidence)
			}
		})
	}
	if got := Summary(nil); got != "" {
		t.Errorf("summary of no gates %q, want empty", got)
	}
}

// A gate whose shell exits while a background job still holds its output
// is judged by the shell's exit code, not reported as a timeout.
func TestRunBackgroundJobDoesNotHang(t *testing.T) {
	res := Run(context.Background(), t.TempDir(), nil, plans.Gate{Name: "bg", Command: "sleep 30 & echo ok"}, time.Minute)
	if !res.Passed() || res.TimedOut || !strings.Contains(res.Output, "ok") {
		t.Fatalf("want a pass with output ok, got exit %d timed out %v err %v output %q", res.ExitCode, res.TimedOut, res.Err, res.Output)
	}
}

// A gate the shell cannot run (127 not found, 126 not executable) names
// the program; any other failure is the agent's to fix.
func TestMissingProgram(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "check.sh"), []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cmd, want string
		code      int
	}{
		{"no-such-tool-for-debussy run .", "no-such-tool-for-debussy", 127},
		{"FOO=1 no-such-tool-for-debussy", "no-such-tool-for-debussy", 127},
		{"echo before; no-such-tool-for-debussy", "no-such-tool-for-debussy", 127},
		{"./check.sh", "./check.sh", 126},
		{"exit 127", "exit", 127}, // the shell names nothing: the first word
		{"echo no; exit 1", "", 1},
		{"true", "", 0},
	}
	for _, tt := range tests {
		res := Run(context.Background(), dir, nil, plans.Gate{Name: "g", Command: tt.cmd}, time.Minute)
		if res.ExitCode != tt.code || res.Missing() != tt.want {
			t.Errorf("%q: exit %d missing %q, want %d %q (output %q)", tt.cmd, res.ExitCode, res.Missing(), tt.code, tt.want, res.Output)
		}
	}
}

func TestUnchecked(t *testing.T) {
	ph := &plans.Phase{Gates: []plans.Gate{
		{Name: "vet", Command: "go vet ./..."},
		{Name: "i18n", Requirement: "all strings translated", Unchecked: true},
		{Name: "docs", Requirement: "the README says how", Unchecked: true},
	}}
	if got := strings.Join(Unchecked(ph), ", "); got != "i18n, docs" {
		t.Errorf("Unchecked = %q, want \"i18n, docs\"", got)
	}
	if got := Unchecked(&plans.Phase{}); got != nil {
		t.Errorf("Unchecked of no gates = %q, want nil", got)
	}
}
