package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/internal/gitrun"
)

// GitCode are the places of the tree's git whose contents git runs or
// obeys as code: the hooks directory (core.hooksPath honoured) and the
// config files (core.hooksPath, core.fsmonitor, filter and diff drivers,
// aliases, sshCommand). debussy's commits run git outside the boundary, so
// an agent that could write them would run code there at the next commit:
// they stay read-only inside it, though the rest of .git is the agent's to
// write (its own git add and commit). A hooks directory that does not exist
// is made (empty), so that it can be bound read-only before the agent
// creates it. Nothing, when git cannot say (not a repository, no git): the
// boundary's writable places then hold no git dir of the tree's anyway.
func GitCode(work string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := gitrun.Runner{Dir: work}.Run(ctx, gitrun.Call{},
		"rev-parse", "--path-format=absolute", "--git-path", "hooks", "--git-path", "config", "--git-path", "config.worktree", "--git-common-dir")
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 {
		return nil
	}
	hooks, common := lines[0], lines[3]
	paths := []string{hooks, lines[1], lines[2], filepath.Join(common, "config")}
	if _, err := os.Stat(hooks); os.IsNotExist(err) {
		_ = os.MkdirAll(hooks, 0o755)
	}
	var found []string
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil && !slices.Contains(found, p) {
			found = append(found, p)
		}
	}
	return found
}
