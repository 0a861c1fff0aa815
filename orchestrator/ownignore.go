package orchestrator

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"

	"github.com/debussy-dev/debussy/gitcommit"
)

// IgnoreLines are what `debussy init` appends to .gitignore.
const IgnoreLines = "# debussy's run state (ledger, logs, checkpoints)\n.debussy/\n"

// IgnoresState reports whether a .gitignore line already keeps .debussy/ out.
func IgnoresState(line []byte) bool {
	switch string(bytes.TrimSpace(line)) {
	case ".debussy/", ".debussy", "/.debussy/", "/.debussy":
		return true
	}
	return false
}

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

// onlyOwnIgnore reports whether the work tree's .gitignore is HEAD's with
// only blank lines, comments and .debussy/ lines appended (at least one).
func onlyOwnIgnore(repo *gitcommit.Repo) bool {
	head, _, err := repo.HeadFile(".gitignore")
	if err != nil {
		return false
	}
	work, err := os.ReadFile(filepath.Join(repo.Root(), ".gitignore"))
	if err != nil {
		return false
	}
	head = bytes.ReplaceAll(head, []byte("\r\n"), []byte("\n"))
	work = bytes.ReplaceAll(work, []byte("\r\n"), []byte("\n"))
	added, ok := bytes.CutPrefix(work, head)
	if !ok {
		return false
	}
	if len(head) > 0 && !bytes.HasSuffix(head, []byte("\n")) {
		// init ends the last line before its own.
		if added, ok = bytes.CutPrefix(added, []byte("\n")); !ok {
			return false
		}
	}
	own := false
	for _, line := range bytes.Split(added, []byte("\n")) {
		t := bytes.TrimSpace(line)
		switch {
		case IgnoresState(t):
			own = true
		case len(t) == 0, t[0] == '#':
		default:
			return false
		}
	}
	return own
}
