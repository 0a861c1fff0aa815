package orchestrator

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/state"
)

// A commit in which git's verdict replaced debussy's staging is reported:
// a git_replaced event naming the paths, with a reproduction file.
func TestGitReplacedIsReported(t *testing.T) {
	f := newFixture(t, script{})
	r := econRun(t, config.Defaults())
	p := r.econPhase("1")
	p.repo = f.repo
	head, err := f.repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	c := gitcommit.Commit{Hash: head, GitReplaced: []gitcommit.PathDisagreement{{Path: "x.log", Committed: "100644 " + strings.Repeat("1", 40)}}}
	r.verifyCommit(p, c, eventRestart, r.now())
	evs, err := state.ReadEvents(r.Store.EventsPath("r"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev["event"] != "git_replaced" {
			continue
		}
		repro, _ := ev["reproduction"].(string)
		if b, err := os.ReadFile(repro); err != nil || !strings.Contains(string(b), "x.log") {
			t.Errorf("reproduction %q: %v\n%s", repro, err, b)
		}
		return
	}
	t.Errorf("no git_replaced event in %v", evs)
}

// A commit git staged when it was made (Commit.StagedByGit) is not
// replayed: a hook may have formatted or generated files since, which a
// replay would report. The same commit not staged by git is replayed, and
// the file a hook left is reported.
func TestStagedByGitIsNotReplayed(t *testing.T) {
	f := newFixture(t, script{})
	head, err := f.repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	f.write("generated.txt", "a post-commit hook wrote it\n")
	for _, staged := range []bool{false, true} {
		r := econRun(t, config.Defaults())
		p := r.econPhase("1")
		p.repo = f.repo
		r.verifyCommit(p, gitcommit.Commit{Hash: head, StagedByGit: staged}, eventCompleted, r.now())
		evs, err := state.ReadEvents(r.Store.EventsPath("r"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range evs {
			got = append(got, fmt.Sprintf("%v at_commit=%v", ev["event"], ev["at_commit"]))
		}
		want := "git_disagreement at_commit=<nil>"
		if staged {
			want = "git_check at_commit=true"
		}
		if !slices.Contains(got, want) || len(got) != 1 {
			t.Errorf("StagedByGit=%v: events %v, want only %s", staged, got, want)
		}
	}
}
