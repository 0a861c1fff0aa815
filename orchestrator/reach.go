package orchestrator

import (
	"fmt"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/state"
)

// discarded says why an earlier run's record of a phase no longer matches
// git — the commit it began at or its last commit is not reachable from
// HEAD (a `git reset --hard` past them) — or "" when it still does. Its
// checkpoint, handoff and notes describe work that is gone, so a resume
// from it would tell the agent about files that are not there.
func discarded(repo *gitcommit.Repo, prev *state.PhaseRecord) string {
	var hashes []string
	if prev.BaseCommit != "" {
		hashes = append(hashes, prev.BaseCommit)
	}
	if n := len(prev.Commits); n > 0 {
		hashes = append(hashes, prev.Commits[n-1])
	}
	if repo == nil || len(hashes) == 0 {
		return ""
	}
	on, err := repo.Reachable(hashes...)
	if err != nil {
		return "" // git cannot tell; .debussy/ is all there is
	}
	for i, h := range hashes {
		if !on[h] {
			what := "its last commit"
			if i == 0 && h == prev.BaseCommit {
				what = "the commit it began at"
			}
			return fmt.Sprintf("%s, %s, is not on this branch", what, gitcommit.Short(h))
		}
	}
	return ""
}
