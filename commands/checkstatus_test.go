package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/gitcommit"
)

// A phase a run completed shows as completed in check — from git's commit
// trailers (another machine, no .debussy/) — though the plan's table still
// says pending; the others stay pending.
func TestCheckShowsCompletedPhases(t *testing.T) {
	dir := gitRepo(t)
	write(t, filepath.Join(dir, "greet.sh"), "greet() { echo \"Hello, $1\"; }\n")
	msg := gitcommit.Message{Subject: `debussy: phase 1 "Greeting library" — completed`, Run: "20261125-0000-test",
		Plan: "plan/MASTER_PLAN.md", Phase: "1", Event: "completed", Session: 1, Sessions: 1}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", msg.String())
	env := map[string]string{"PATH": os.Getenv("PATH"), "IS_SANDBOX": "1"}
	code, out, stderr := invoke(t, dir, env, "check", "plan/MASTER_PLAN.md")
	if code != 0 {
		t.Fatalf("check: exit %d\n%s%s", code, out, stderr)
	}
	row := func(id string) string { return regexp.MustCompile(`(?m)^  ` + id + `  .*$`).FindString(out) }
	if !strings.Contains(row("1"), "completed") || !strings.Contains(row("2"), "pending") {
		t.Errorf("check's rows: %q, %q; want phase 1 completed, phase 2 pending\n%s", row("1"), row("2"), out)
	}
	_, js, _ := invoke(t, dir, env, "check", "--json", "plan/MASTER_PLAN.md")
	var got struct {
		Phases []struct{ ID, Status string } `json:"phases"`
	}
	if err := json.Unmarshal([]byte(js), &got); err != nil || len(got.Phases) < 2 || got.Phases[0].Status != "completed" || got.Phases[1].Status != "pending" {
		t.Errorf("check --json phases %+v (%v)", got.Phases, err)
	}
}
