package orchestrator

import (
	"os"
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
