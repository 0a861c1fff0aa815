package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/state"
)

// `debussy handoff` records the agent's handoff for its session only once
// the file holds one; every mistake is exit 2 with one line saying what to
// do.
func TestHandoffCommand(t *testing.T) {
	dir := gitRepo(t)
	store := state.New(filepath.Join(dir, state.DirName))
	run := &state.Run{ID: "20260101-0000-abcd", Status: state.StatusRunning,
		Phases: []*state.PhaseRecord{{ID: "1", Sessions: 3}, {ID: "2"}}}
	if err := store.Save(&state.Ledger{Runs: []*state.Run{run}}); err != nil {
		t.Fatal(err)
	}
	inRun := map[string]string{state.EnvStateDir: store.Dir, state.EnvRunID: run.ID, state.EnvPhaseID: "1"}
	own := store.HandoffPath(run.ID, "1", 3)
	if err := os.MkdirAll(filepath.Dir(own), 0o700); err != nil {
		t.Fatal(err)
	}
	const secret = "AKIAIOSFODNN7EXAMPLE"
	mustWrite := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, path), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite("blank.md", " \n\n")
	mustWrite("mine.md", "## Completed\nthe parser; key "+secret+"\n")

	cases := []struct {
		name   string
		before func()
		args   []string
		code   int
		out    string // contained in stdout (exit 0) or stderr
	}{
		{"the default file missing", nil, []string{"handoff"}, 2,
			"no handoff at " + own + ": write your handoff there first, then run debussy handoff --phase 1"},
		{"an empty file", nil, []string{"handoff", "--file", "blank.md"}, 2, "the handoff at " + filepath.Join(dir, "blank.md") + " is empty"},
		{"a phase the run lacks", nil, []string{"handoff", "--phase", "9", "--file", "mine.md"}, 2, `no phase "9" in run`},
		{"a phase with no session", nil, []string{"handoff", "--phase", "2", "--file", "mine.md"}, 2, "phase 2 of run 20260101-0000-abcd has no session yet"},
		{"arguments", nil, []string{"handoff", "mine.md"}, 2, "unexpected arguments: mine.md"},
		{"a file elsewhere is copied to the session's handoff, redacted", nil, []string{"handoff", "--file", "mine.md"}, 0,
			"debussy: handoff recorded; end your turn now — debussy restarts the session from it"},
		{"the default file, written by the agent", func() { mustWrite(own[len(dir)+1:], "## Completed\nall of it\n") }, []string{"handoff", "--phase", "1"}, 0,
			"handoff recorded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				tc.before()
			}
			code, stdout, stderr := invoke(t, dir, inRun, tc.args...)
			got := stderr
			if tc.code == 0 {
				got = stdout
			}
			if code != tc.code || !strings.Contains(got, tc.out) {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, tc.code, tc.out, stdout, stderr)
			}
			if code == ExitUsage && strings.Count(strings.TrimRight(stderr, "\n"), "\n") > 0 {
				t.Errorf("a usage error takes one line, got:\n%s", stderr)
			}
			sig, err := store.ReadHandoffSignal(run.ID, "1")
			if err != nil {
				t.Fatal(err)
			}
			if code != 0 { // the failing cases come first
				if sig != nil {
					t.Errorf("a refused handoff left a signal: %+v", sig)
				}
				return
			}
			if sig == nil || sig.Session != 3 || sig.Path != own {
				t.Fatalf("signal %+v, want session 3 at %s", sig, own)
			}
			data, err := os.ReadFile(own)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), secret) || !strings.Contains(string(data), "## Completed") {
				t.Errorf("handoff copied as:\n%s", data)
			}
			for _, p := range []string{own, filepath.Join(store.RunDir(run.ID), "signals", "handoff", "1.json")} {
				if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != state.FileMode {
					t.Errorf("%s: %v (want mode %v)", p, err, state.FileMode)
				}
			}
		})
	}
}
