package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/debussy-dev/debussy/internal/gitrun"
)

// Merges by git itself: `git merge-tree --write-tree` (2.38 and later)
// merges the two commits as `git merge` would (merge-ort: merge bases,
// renames, attributes and merge drivers) without touching the index or the
// work tree; Merge then checks the merged tree out with git.

// MergeGit is the first git whose merge-tree writes a tree (--write-tree):
// an older one commits, but cannot merge.
var MergeGit = [2]int{2, 38}

// CanMerge reports whether the git that printed versionLine (`git
// --version`) merges; known is false for a line it cannot read.
func CanMerge(versionLine string) (ok, known bool) {
	var major, minor int
	if _, err := fmt.Sscanf(strings.TrimSpace(versionLine), "git version %d.%d", &major, &minor); err != nil {
		return false, false
	}
	return major > MergeGit[0] || major == MergeGit[0] && minor >= MergeGit[1], true
}

// gitMergeEnv is the environment git merges in: the process's, without
// the variables that would point git at another repository, index or
// object directory (or ref namespace) than the one given on its command
// line, and with the object directories debussy reads (objdirs.go).
func (r *Repo) gitMergeEnv() []string {
	return append(withoutVar(withoutRepoEnv(r.environ()), "GIT_NAMESPACE"), r.objectEnvVars()...)
}

// mergeByGit merges commit theirs into ours with `git merge-tree
// --write-tree` and returns the merged tree, or the paths git could not
// merge. git reads attributes from the work tree, which holds ours (as for
// `git merge`). Histories without a common commit merge against the empty
// tree, as debussy's own merge does.
func (r *Repo) mergeByGit(ctx context.Context, ours, theirs plumbing.Hash) (tree plumbing.Hash, conflicts []string, err error) {
	run := gitrun.Runner{Git: r.gitBin, Dir: r.root, Env: r.gitMergeEnv()}
	stdout, err := run.Run(ctx, gitrun.Call{}, "--git-dir="+r.gitDir, "--work-tree="+r.root,
		"merge-tree", "--write-tree", "--allow-unrelated-histories", "-z", "--name-only", "--messages",
		ours.String(), theirs.String())
	var ge *GitError
	clean := err == nil
	if err != nil && !(errors.As(err, &ge) && ge.ExitCode == 1) {
		return plumbing.ZeroHash, nil, fmt.Errorf("git merge-tree (merging needs git %d.%d or later): %w", MergeGit[0], MergeGit[1], err)
	}
	tree, names, messages, err := parseMergeTree(stdout)
	if err != nil {
		return plumbing.ZeroHash, nil, fmt.Errorf("git merge-tree: %w", err)
	}
	if clean {
		return tree, nil, nil
	}
	return tree, conflictPaths(names, messages), nil
}

// mergeTreeMessage is one record of merge-tree's -z messages section.
type mergeTreeMessage struct {
	paths []string
	kind  string // "Auto-merging", "CONFLICT (content)", ...
}

// parseMergeTree reads `git merge-tree --write-tree -z --name-only
// --messages` output: the tree id, the conflicted paths, an empty field,
// and the message records (<n> NUL <path>... <type> NUL <message> NUL).
func parseMergeTree(out []byte) (tree plumbing.Hash, names []string, messages []mergeTreeMessage, err error) {
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(fields) == 0 || !plumbing.IsHash(fields[0]) {
		return plumbing.ZeroHash, nil, nil, fmt.Errorf("no tree id in %q", out)
	}
	tree, fields = plumbing.NewHash(fields[0]), fields[1:]
	for len(fields) > 0 && fields[0] != "" {
		names, fields = append(names, fields[0]), fields[1:]
	}
	if len(fields) > 0 {
		fields = fields[1:]
	}
	for len(fields) > 0 {
		n, cerr := strconv.Atoi(fields[0])
		if cerr != nil || n < 0 || len(fields) < n+3 {
			return plumbing.ZeroHash, nil, nil, fmt.Errorf("malformed message record %q", strings.Join(fields, "\\0"))
		}
		messages = append(messages, mergeTreeMessage{paths: fields[1 : n+1], kind: fields[n+1]})
		fields = fields[n+3:]
	}
	return tree, names, messages, nil
}

// conflictPaths is what a ConflictError names for git's conflicts: the
// paths git left conflicted and those its CONFLICT messages name. A
// conflicted path git made up (the "x~HEAD" a file is moved to when a
// directory took its name) is left out when the messages name the real
// one.
func conflictPaths(names []string, messages []mergeTreeMessage) []string {
	named := map[string]bool{}
	var all []string
	for _, m := range messages {
		if strings.HasPrefix(m.kind, "CONFLICT") {
			for _, p := range m.paths {
				named[p] = true
				all = append(all, p)
			}
		}
	}
	var madeUp []string
	for _, p := range names {
		if i := strings.LastIndexByte(p, '~'); i > 0 && named[p[:i]] {
			madeUp = append(madeUp, p)
			continue
		}
		all = append(all, p)
	}
	out := slices.DeleteFunc(all, func(p string) bool { return slices.Contains(madeUp, p) })
	if len(out) == 0 { // never an empty list for a conflict
		out = names
	}
	slices.Sort(out)
	return slices.Compact(out)
}
