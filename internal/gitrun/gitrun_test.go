package gitrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeGit writes a shell script that stands for git.
func fakeGit(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "git")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		call     Call
		noPrompt bool
		want     string
		wantErr  string
		exit     int
	}{
		{name: "stdout", script: "echo out; echo err >&2\n", want: "out\n"},
		{name: "a failure is a GitError", script: "echo partial; echo 'fatal: no' >&2; exit 3\n", want: "partial\n",
			wantErr: "git status --x: exit status 3: fatal: no", exit: 3},
		{name: "stdin and env", script: "cat; echo \"$EXTRA\"\n", call: Call{Stdin: strings.NewReader("in\n"), Env: []string{"EXTRA=yes"}},
			want: "in\nyes\n"},
		{name: "no prompt", noPrompt: true, script: "echo \"$GIT_TERMINAL_PROMPT $GIT_ASKPASS\"\n", want: "0 true\n"},
		{name: "user code, output in files", script: "echo out; echo err >&2; exit 1\n", call: Call{UserCode: true}, want: "out\n",
			wantErr: "exit status 1: err", exit: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Runner{Git: fakeGit(t, tt.script), NoPrompt: tt.noPrompt}
			out, err := r.Run(context.Background(), tt.call, "status", "--x")
			if string(out) != tt.want {
				t.Errorf("stdout = %q, want %q", out, tt.want)
			}
			var ge *GitError
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.wantErr != "" && (!errors.As(err, &ge) || !strings.Contains(err.Error(), tt.wantErr) || ge.ExitCode != tt.exit):
				t.Fatalf("err = %v, want a GitError with %q, exit %d", err, tt.wantErr, tt.exit)
			}
		})
	}
}

// A hook's background child that keeps git's stdout open does not hold a
// user-code run up: git's end is the run's.
func TestUserCodeDoesNotWaitForBackgroundChildren(t *testing.T) {
	r := Runner{Git: fakeGit(t, "sleep 30 &\necho done\n")}
	start := time.Now()
	out, err := r.Run(context.Background(), Call{UserCode: true}, "commit")
	if err != nil || string(out) != "done\n" {
		t.Fatalf("Run = %q, %v", out, err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("Run waited %s for the background child", took)
	}
}

// The context's end stops git and what it started, in both kinds of run.
func TestContextEndStopsEverything(t *testing.T) {
	for _, user := range []bool{false, true} {
		t.Run(map[bool]string{false: "plumbing", true: "user code"}[user], func(t *testing.T) {
			pids := filepath.Join(t.TempDir(), "pids")
			r := Runner{Git: fakeGit(t, "sleep 120 &\necho $! >> "+pids+"\necho $$ >> "+pids+"\nwait\n")}
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				for range 600 {
					if b, _ := os.ReadFile(pids); strings.Count(string(b), "\n") >= 2 {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				cancel()
			}()
			_, err := r.Run(ctx, Call{UserCode: user}, "commit")
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run = %v, want the context's end", err)
			}
			b, _ := os.ReadFile(pids)
			for _, f := range strings.Fields(string(b)) {
				pid, _ := strconv.Atoi(f)
				gone := false
				for range 100 {
					if syscall.Kill(pid, 0) != nil || zombie(pid) {
						gone = true
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				if !gone {
					t.Errorf("process %d outlived the run", pid)
				}
			}
		})
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// A git the terminal's Ctrl-C reached first (in debussy's own process
// group) is an interruption, as the context's end is.
func TestSIGINTIsAnInterruption(t *testing.T) {
	r := Runner{Git: fakeGit(t, "kill -INT $$\nsleep 5\n")}
	if _, err := r.Run(context.Background(), Call{UserCode: true}, "commit"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want an interruption", err)
	}
	// Plumbing never shares debussy's group: its SIGINT is git's failure.
	var ge *GitError
	if _, err := r.Run(context.Background(), Call{}, "status"); !errors.As(err, &ge) {
		t.Fatalf("Run = %v, want a GitError", err)
	}
}
