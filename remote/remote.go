// Package remote is debussy's one place for the network: it fetches the
// phases' result branches (debussy/<plan-id>/phase-<id>), pushes a phase's
// branch, and reads what those branches record (a phase's outcome, a usage
// limit's reset). It runs git's own CLI, so the credentials, helpers and
// SSH config users already have apply; every git takes the caller's ctx
// and runs in its own process group, so Ctrl-C cuts a hung fetch or push.
package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/debussy-dev/debussy/internal/gitrun"
)

// ErrRejected is a push the remote refused because its branch moved on (a
// concurrent pusher): fetch, merge, push again — never force.
var ErrRejected = errors.New("push rejected: the remote branch has commits this one lacks")

// ErrNoRemote is a remote name the repository does not know.
var ErrNoRemote = errors.New("no such remote")

// GitError is a git command that failed: what ran, its exit code, and
// what it said (internal/gitrun's, the one every package returns).
type GitError = gitrun.GitError

// Remote is one git remote of one repository.
type Remote struct {
	Dir  string   // the repository's work tree (or a linked worktree of it)
	Name string   // the remote, e.g. origin
	Env  []string // git's environment; nil is the process's
}

// Tracking is where a fetch of the remote's branch lands:
// refs/remotes/<name>/<branch>.
func (r Remote) Tracking(branch string) string {
	return "refs/remotes/" + r.Name + "/" + branch
}

// git runs git in r.Dir and returns its stdout. It never prompts: a
// credential git does not have is an error, not a hang. What git says is
// read in the C locale.
func (r Remote) git(ctx context.Context, args ...string) (string, error) {
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	run := gitrun.Runner{Dir: r.Dir, Env: append(slices.Clone(env), "LC_ALL=C"), NoPrompt: true}
	out, err := run.Run(ctx, gitrun.Call{}, args...)
	var ge *GitError
	if errors.As(err, &ge) {
		ge.Stderr = tail(ge.Stderr, 2000)
	}
	return string(out), err
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// Git runs a local git command in the repository as the remote's own
// commands run (its process group, the context, never a prompt), its
// output trimmed: for a caller's checkout or branch work beside a fetch.
func (r Remote) Git(ctx context.Context, args ...string) (string, error) {
	out, err := r.git(ctx, args...)
	return strings.TrimSpace(out), err
}

// Check reports ErrNoRemote when the repository has no remote r.Name.
func (r Remote) Check(ctx context.Context) error {
	if _, err := r.git(ctx, "remote", "get-url", r.Name); err != nil {
		var ge *GitError
		if errors.As(err, &ge) {
			return fmt.Errorf("%w %q in %s (git remote -v lists them)", ErrNoRemote, r.Name, r.Dir)
		}
		return err
	}
	return nil
}

// Fetch fetches the remote's branches under prefix (e.g. "debussy/" or
// "debussy/<plan-id>/") into refs/remotes/<name>/<prefix>…, pruning those
// the remote deleted. Branches that are not there are no error.
func (r Remote) Fetch(ctx context.Context, prefix string) error {
	spec := fmt.Sprintf("+refs/heads/%s*:%s*", prefix, r.Tracking(prefix))
	if _, err := r.git(ctx, "fetch", "--quiet", "--no-tags", "--prune", "--no-write-fetch-head", r.Name, spec); err != nil {
		return fmt.Errorf("fetch %s from %s: %w", prefix+"*", r.Name, err)
	}
	return nil
}

// FetchBranch fetches one branch; ok is false when the remote has none.
func (r Remote) FetchBranch(ctx context.Context, branch string) (ok bool, err error) {
	spec := fmt.Sprintf("+refs/heads/%s:%s", branch, r.Tracking(branch))
	if _, err := r.git(ctx, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", r.Name, spec); err != nil {
		var ge *GitError
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "couldn't find remote ref") {
			_, _ = r.git(ctx, "update-ref", "-d", r.Tracking(branch))
			return false, nil
		}
		return false, fmt.Errorf("fetch %s from %s: %w", branch, r.Name, err)
	}
	return true, nil
}

// Tip is the commit ref names; ok is false when there is no such ref.
func (r Remote) Tip(ctx context.Context, ref string) (hash string, ok bool, err error) {
	out, err := r.git(ctx, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	var ge *GitError
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSpace(out), true, nil
}

// IsAncestor reports whether commit a is reachable from commit b (or is b).
func (r Remote) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := r.git(ctx, "merge-base", "--is-ancestor", a, b)
	var ge *GitError
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return false, nil
	}
	return err == nil, err
}

// FastForward moves the checked-out branch, its index and work tree to
// ref, which must descend from HEAD (`git merge --ff-only`).
func (r Remote) FastForward(ctx context.Context, ref string) error {
	if _, err := r.git(ctx, "merge", "--ff-only", "--quiet", ref); err != nil {
		return fmt.Errorf("fast-forward to %s: %w", ref, err)
	}
	return nil
}

// ResetKeep moves the checked-out branch back to commit, keeping local
// changes (`git reset --keep`): undoing merges made a moment ago.
func (r Remote) ResetKeep(ctx context.Context, commit string) error {
	if _, err := r.git(ctx, "reset", "--quiet", "--keep", commit); err != nil {
		return fmt.Errorf("reset to %s: %w", commit, err)
	}
	return nil
}

// Push pushes HEAD to the remote's branch. It never forces: a remote
// branch that has moved on is ErrRejected, for the caller to fetch, merge
// and push again.
func (r Remote) Push(ctx context.Context, branch string) error {
	out, err := r.git(ctx, "push", "--porcelain", "--quiet", r.Name, "HEAD:refs/heads/"+branch)
	if err == nil {
		return nil
	}
	var ge *GitError
	if errors.As(err, &ge) && rejectedNonFF(out+ge.Stderr) {
		return fmt.Errorf("push %s to %s: %w", branch, r.Name, ErrRejected)
	}
	return fmt.Errorf("push %s to %s: %w", branch, r.Name, err)
}

// rejectedNonFF reads `git push --porcelain`'s status line for a branch
// the remote refused because it moved on: "[rejected] (non-fast-forward)"
// or "(fetch first)". A hook's "[remote rejected]" is not one: retrying
// would not help.
func rejectedNonFF(out string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "!") && strings.Contains(l, "[rejected]") &&
			(strings.Contains(l, "non-fast-forward") || strings.Contains(l, "fetch first")) {
			return true
		}
	}
	return false
}
