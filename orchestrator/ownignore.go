package orchestrator

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/state"
)

// withoutOwnIgnore drops .gitignore from the dirty paths when its only
// change since HEAD is debussy's own ignore line (what `debussy init`
// adds): the quick start's `init` then `run` must not be refused as
// uncommitted changes. The run's first commit takes the line in.
func withoutOwnIgnore(repo *gitcommit.Repo, dirty []string) []string {
	i := slices.Index(dirty, ".gitignore")
	if i < 0 || !onlyOwnIgnore(repo) {
		return dirty
	}
	return slices.Delete(slices.Clone(dirty), i, i+1)
}

// onlyOwnIgnore reports whether the work tree's .gitignore differs from
// HEAD's by debussy's own ignore line only (state.OnlyOwnIgnore).
func onlyOwnIgnore(repo *gitcommit.Repo) bool {
	head, _, err := repo.HeadFile(".gitignore")
	if err != nil {
		return false
	}
	work, err := os.ReadFile(filepath.Join(repo.Root(), ".gitignore"))
	return err == nil && state.OnlyOwnIgnore(head, work)
}
