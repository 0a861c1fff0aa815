package commands

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/remote"
)

// dagRepo makes a repository with a plan of four phases: 2 and 3 depend
// on 1, 4 on both.
func dagRepo(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "plan"), 0o755); err != nil {
		t.Fatal(err)
	}
	deps := map[string][]string{"1": nil, "2": {"1"}, "3": {"1"}, "4": {"2", "3"}}
	master := "# DAG\n\n## Phases\n\n| Phase | Title | Status |\n|---|---|---|\n"
	for _, id := range []string{"1", "2", "3", "4"} {
		master += fmt.Sprintf("| %s | [Step %s](phase-%s.md) | Pending |\n", id, id, id)
		dep := "N/A"
		if len(deps[id]) > 0 {
			var links []string
			for _, d := range deps[id] {
				links = append(links, fmt.Sprintf("[Phase %s](phase-%s.md)", d, d))
			}
			dep = strings.Join(links, ", ")
		}
		write(t, filepath.Join(dir, "plan", "phase-"+id+".md"), fmt.Sprintf(
			"# Phase %s: Step %s\n\n**Depends On:** %s\n\n## Tasks\n- [ ] step %s\n\n## Gates\n- ok: `true`\n", id, id, dep, id))
	}
	write(t, filepath.Join(dir, "plan", "MASTER_PLAN.md"), master)
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "plan")
	return dir
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// outcomeCommit records a phase's end as debussy does, in an empty commit.
func outcomeCommit(t *testing.T, dir, phase, event string) {
	t.Helper()
	m := gitcommit.Message{Subject: "debussy: phase " + phase + " — " + event, Run: "r1", Plan: "plan/MASTER_PLAN.md",
		Phase: phase, Event: event, Sessions: 2, Restarts: 1}
	if event != "completed" {
		m.Reason = "gate ok failed"
	}
	gitIn(t, dir, "commit", "-q", "--allow-empty", "-m", m.String())
}

func TestMatrix(t *testing.T) {
	tests := []struct {
		name  string
		ended map[string]string // phase → event, committed in this order: 1, 2, 3, 4
		want  string
	}{
		{"fresh plan", nil, `{"include":[{"phase":"1","title":"Step 1"}]}`},
		{"after phase 1", map[string]string{"1": "completed"}, `{"include":[{"phase":"2","title":"Step 2"},{"phase":"3","title":"Step 3"}]}`},
		{"a failed phase is ready again", map[string]string{"1": "completed", "2": "failed"}, `{"include":[{"phase":"2","title":"Step 2"},{"phase":"3","title":"Step 3"}]}`},
		{"after 1 to 3", map[string]string{"1": "completed", "2": "completed", "3": "completed"}, `{"include":[{"phase":"4","title":"Step 4"}]}`},
		{"all done", map[string]string{"1": "completed", "2": "completed", "3": "completed", "4": "completed"}, `{"include":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := dagRepo(t)
			for _, id := range []string{"1", "2", "3", "4"} {
				if ev, ok := tt.ended[id]; ok {
					outcomeCommit(t, dir, id, ev)
				}
			}
			code, stdout, stderr := invoke(t, dir, nil, "matrix", "plan/MASTER_PLAN.md")
			if code != 0 || stdout != tt.want+"\n" {
				t.Errorf("exit %d, stdout %q, want %q; stderr %s", code, stdout, tt.want, stderr)
			}
		})
	}
}

func TestMatrixUsage(t *testing.T) {
	dir := dagRepo(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		output string
	}{
		{"no plan", []string{"matrix"}, 2, "missing MASTER_PLAN.md"},
		{"missing plan", []string{"matrix", "nope.md"}, 2, "nope.md"},
		{"help teaches the workflow", []string{"matrix", "--help"}, 0, "fromJSON(needs.plan.outputs.matrix)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := invoke(t, dir, nil, tt.args...)
			if code != tt.code || !strings.Contains(stdout+stderr, tt.output) {
				t.Errorf("exit %d (want %d), output lacks %q:\n%s%s", code, tt.code, tt.output, stdout, stderr)
			}
		})
	}
}

// --only refuses before any session, so --dry-run shows its decisions.
func TestRunOnly(t *testing.T) {
	tests := []struct {
		name   string
		ended  []string // completed phases, in order
		args   []string
		code   int
		output string
	}{
		{"dependencies not done", nil, []string{"--only", "4"}, 2, "--only 4 depends on unfinished phases 1, 2, 3"},
		{"some dependencies done", []string{"1", "2"}, []string{"--only", "4"}, 2, "--only 4 depends on unfinished phase 3"},
		{"unknown phase", nil, []string{"--only", "9"}, 2, "MASTER_PLAN.md; its phases are 1, 2, 3, 4"},
		{"with --phase", nil, []string{"--only", "1", "--phase", "1"}, 2, "--only and --phase contradict each other"},
		{"ready", []string{"1"}, []string{"--only", "3"}, 0, "  2  Step 2  [pending]  (not run: --only runs one phase)"},
		{"completed per git", []string{"1"}, nil, 0, "  1  Step 1  [pending]  (skipped: already completed)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := dagRepo(t)
			for _, id := range tt.ended {
				outcomeCommit(t, dir, id, "completed")
			}
			args := append([]string{"run", "plan/MASTER_PLAN.md", "--dry-run"}, tt.args...)
			code, stdout, stderr := invoke(t, dir, nil, args...)
			if code != tt.code || !strings.Contains(stdout+stderr, tt.output) {
				t.Errorf("exit %d (want %d), output lacks %q:\n%s%s", code, tt.code, tt.output, stdout, stderr)
			}
		})
	}
}

func TestStatusFromGit(t *testing.T) {
	dir := dagRepo(t)
	outcomeCommit(t, dir, "1", "completed")
	outcomeCommit(t, dir, "2", "blocked")
	head := gitIn(t, dir, "rev-parse", "HEAD")
	first := gitIn(t, dir, "rev-parse", "HEAD~1")

	code, stdout, stderr := invoke(t, dir, nil, "status", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Source string `json:"source"`
		Status string `json:"status"`
		Phases []struct {
			ID, Status         string
			LastError          string `json:"last_error"`
			Sessions, Restarts int
			Commits            []string
		} `json:"phases"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if got.Source != "git" || got.Status != "blocked" || len(got.Phases) != 4 {
		t.Fatalf("status --json:\n%s", stdout)
	}
	want := []string{"1 completed " + first, "2 blocked " + head, "3 pending ", "4 pending "}
	for i, p := range got.Phases {
		commit := ""
		if len(p.Commits) > 0 {
			commit = p.Commits[0]
		}
		if line := p.ID + " " + p.Status + " " + commit; line != want[i] {
			t.Errorf("phase %d: %q, want %q", i, line, want[i])
		}
	}
	if p := got.Phases[1]; p.LastError != "gate ok failed" || p.Sessions != 2 || p.Restarts != 1 {
		t.Errorf("phase 2 record %+v", p)
	}

	code, stdout, _ = invoke(t, dir, nil, "status")
	for _, want := range []string{"per git history", "plan " + filepath.Join(dir, "plan", "MASTER_PLAN.md"), gitcommit.Short(first), "gate ok failed"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".debussy")); err == nil {
		t.Error("status created .debussy/")
	}
}

// A usage limit another job recorded on the remote: matrix prints the
// matrix as usual with not_before on each entry and says when the account
// resets; status shows the hold.
func TestMatrixAndStatusShowTheAccountHold(t *testing.T) {
	dir := dagRepo(t)
	resets := holdOnOrigin(t, dir)

	code, stdout, stderr := invoke(t, dir, nil, "matrix", "plan/MASTER_PLAN.md", "--remote", "")
	if want := `{"include":[{"phase":"1","title":"Step 1"}]}` + "\n"; code != 0 || stdout != want {
		t.Errorf("matrix without the remote: exit %d %q; stderr %s", code, stdout, stderr)
	}
	code, stdout, stderr = invoke(t, dir, nil, "matrix", "plan/MASTER_PLAN.md")
	at := resets.Format(time.RFC3339)
	if want := `{"include":[{"phase":"1","title":"Step 1","not_before":"` + at + `"}]}` + "\n"; code != 0 || stdout != want {
		t.Errorf("matrix: exit %d %q, want %q; stderr %s", code, stdout, want, stderr)
	}
	if !strings.Contains(stderr, "5-hour usage limit, met by phase 1") || !strings.Contains(stderr, at) {
		t.Errorf("matrix's stderr does not say when the account resets: %s", stderr)
	}
	// status reads what was fetched, offline.
	code, stdout, _ = invoke(t, dir, nil, "status")
	if code != 0 || !strings.Contains(stdout, "account: the account's 5-hour usage limit") {
		t.Errorf("status: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = invoke(t, dir, nil, "status", "--json")
	if code != 0 || !strings.Contains(stdout, `"account_hold"`) || !strings.Contains(stdout, at) {
		t.Errorf("status --json: exit %d\n%s", code, stdout)
	}
}

// holdOnOrigin gives dir a bare origin on which another job's push of
// phase 1 records the account's 5-hour limit, resetting in 3 hours; it
// returns the reset.
func holdOnOrigin(t *testing.T, dir string) time.Time {
	t.Helper()
	origin := filepath.Join(t.TempDir(), "origin.git")
	gitIn(t, dir, "init", "-q", "--bare", origin)
	gitIn(t, dir, "remote", "add", "origin", origin)
	gitIn(t, dir, "push", "-q", "origin", "HEAD:refs/heads/main")
	other := filepath.Join(t.TempDir(), "other")
	gitIn(t, dir, "clone", "-q", origin, other)
	resets := time.Now().Add(3 * time.Hour).UTC().Truncate(time.Second)
	m := gitcommit.Message{Subject: "debussy: phase 1 — checkpoint at the 5-hour limit", Run: "r1", Plan: "plan/MASTER_PLAN.md",
		Phase: "1", Event: "retry", UsageLimit: remote.LimitTrailer("five_hour", resets)}
	gitIn(t, other, "commit", "-q", "--allow-empty", "-m", m.String())
	gitIn(t, other, "push", "-q", "origin", "HEAD:refs/heads/debussy/plan-master-plan/phase-1")
	return resets
}
