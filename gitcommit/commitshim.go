package gitcommit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// gitCommit runs `git commit -F <msg>` on the index as it is (the staged
// one), with hooks run through shims (hookShims) so that debussy can
// answer the commit's reference transaction before the branch moves. It
// returns the commit made (Hash "" when none was), or why not: a
// *HookError, ErrNothingToCommit, ErrLocked, ctx's cause, or git's error.
//
// gone are the user's files no longer there, by name, with what they
// held: a new path that holds it is one of them renamed, and git's staging
// of it is refused (a *leftOutError), as is a .debussy directory's.
func (r *Repo) gitCommit(ctx context.Context, msg string, o commitOptions, h head, parentTree plumbing.Hash, shims *shimDir, gone map[string]string) (Commit, error) {
	for attempt := 0; ; attempt++ {
		c, err := r.gitCommitOnce(ctx, msg, o, h, parentTree, shims, gone)
		if attempt > 0 || r.madeUp != nil || !identityRefused(err) {
			return c, err
		}
		// git knows no identity: the work is committed all the same, by
		// one made up (MadeUpIdentity warned of it at the start).
		if r.madeUp, err = r.madeUpIdentity(ctx, r.clockEnv()); err != nil {
			return Commit{}, err
		}
	}
}

func (r *Repo) gitCommitOnce(ctx context.Context, msg string, o commitOptions, h head, parentTree plumbing.Hash, shims *shimDir, gone map[string]string) (Commit, error) {
	idEnv := r.clockEnv()
	if r.madeUp != nil {
		idEnv = r.madeUp
	}
	if err := os.WriteFile(shims.path("message"), []byte(msg), 0o600); err != nil {
		return Commit{}, fmt.Errorf("write commit message: %w", err)
	}

	// The answer to the commit's transaction: the commit checked and
	// handed to Written, or the reason it must not land.
	var made Commit
	var refusal error
	answer := func(next plumbing.Hash) error {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx) // interrupted: the branch stays where it was
		}
		c, err := r.checkMade(ctx, next, parentTree, gone)
		if err != nil {
			return err
		}
		if o.written != nil {
			if err := o.written(next.String()); err != nil {
				return err
			}
		}
		made = c
		return nil
	}
	serve, err := shims.serve(h, func(next plumbing.Hash) bool {
		refusal = answer(next)
		return refusal == nil
	})
	if err != nil {
		return Commit{}, fmt.Errorf("commit: %w", err)
	}
	args := []string{"-c", "core.hooksPath=" + shims.dir, "commit", "-q", "--no-edit", "-F", shims.path("message")}
	if o.allowEmpty && !h.hash.IsZero() {
		args = append(args, "--allow-empty")
	}
	_, err = r.gitWrapped(ctx, gitRun{user: true, env: idEnv}, shims, args...)
	serve() // git has exited: no transaction is left to answer

	// What counts is where the branch is: a commit the transaction let
	// through is made even if git (or a post-commit hook's end) said
	// otherwise after.
	if made.Hash != "" {
		if now, herr := r.readHead(); herr == nil && now.hash.String() == made.Hash {
			return made, nil
		}
		made = Commit{}
	}
	switch {
	case refusal != nil:
		return Commit{}, refusal
	case ctx.Err() != nil:
		return Commit{}, fmt.Errorf("git commit: %w", context.Cause(ctx))
	case err == nil:
		return Commit{}, errors.New("git commit made no commit and said nothing")
	}
	return Commit{}, shims.explain(err)
}

// leftOutError names paths git staged that debussy leaves out: the
// commit is refused, and made again without them.
type leftOutError struct{ paths []string }

func (e *leftOutError) Error() string {
	return "staged, and to be left out: " + strings.Join(e.paths, ", ")
}

// checkMade reads the commit git wrote, refuses one that adds what debussy
// leaves out (a *leftOutError: a .debussy directory below the root, a
// gone user file under a new name), has git check the trees it adds when a
// name in them could trip fsck (fsckTrees), and describes it.
func (r *Repo) checkMade(ctx context.Context, next, parentTree plumbing.Hash, gone map[string]string) (Commit, error) {
	// git wrote it loose, where go-git looks without reopening the store
	// (a repack meanwhile would need a fresh look).
	c, err := r.repo.CommitObject(next)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		if err = r.reopen(); err == nil {
			c, err = r.repo.CommitObject(next)
		}
	}
	if err != nil {
		return Commit{}, fmt.Errorf("read the new commit %s: %w", Short(next.String()), err)
	}
	var d treeDiff
	changes, err := r.diffTreesInto(parentTree, c.TreeHash, &d)
	if err != nil {
		return Commit{}, err
	}
	var out []string
	for _, ch := range changes {
		if ch.Status == "A" && isStatePath(ch.Path) {
			out = append(out, ch.Path)
		}
	}
	if moved := goneObjects(gone); len(moved) > 0 {
		for _, ch := range changes {
			if ch.Status == "A" && moved[d.added[ch.Path].String()] && !isStatePath(ch.Path) {
				out = append(out, ch.Path)
			}
		}
	}
	if len(out) > 0 {
		return Commit{}, &leftOutError{paths: out}
	}
	if slices.ContainsFunc(changes, fsckMayReject) {
		if err := r.fsckTrees(ctx, d.trees); err != nil {
			return Commit{}, err
		}
	}
	return Commit{Hash: next.String(), Files: len(changes)}, nil
}

// explain turns git commit's failure into debussy's error: the hook that
// refused (the shims keep each one's status), nothing to commit, a lock
// another git holds, a failed signature.
func (s *shimDir) explain(err error) error {
	var ge *GitError
	if !errors.As(err, &ge) {
		return fmt.Errorf("git commit: %w", err)
	}
	out := &headTail{max: maxHookOutput}
	out.Write([]byte(ge.Stderr))
	if name, code, ok := s.refusingHook(); ok {
		return &HookError{Hook: name, Path: filepath.Join(s.hooks, name), ExitCode: code, Output: out.String()}
	}
	stderr := ge.Stderr
	switch {
	case strings.Contains(stderr, "empty commit message"):
		return &HookError{Hook: "commit-msg", ExitCode: 0,
			Output: "the hooks left an empty commit message; git aborts such a commit"}
	case strings.Contains(stderr, ".lock': File exists") || strings.Contains(stderr, "cannot lock ref"):
		return fmt.Errorf("commit: %s: %w", strings.TrimSpace(stderr), ErrLocked)
	case strings.Contains(stderr, "failed to sign") || strings.Contains(stderr, "gpg failed"):
		return fmt.Errorf("sign commit (commit.gpgSign is set): %s", strings.TrimSpace(stderr))
	case ge.ExitCode == 1 && strings.TrimSpace(stderr) == "" || strings.Contains(stderr, "is now empty"):
		// git printed its status: nothing to commit.
		return ErrNothingToCommit
	}
	return fmt.Errorf("git commit: %w", err)
}

// refusingHook is the commit hook that exited non-zero, if one did.
func (s *shimDir) refusingHook() (name string, code int, ok bool) {
	b, err := os.ReadFile(s.path("status"))
	if err != nil {
		return "", 0, false
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n == 0 {
			continue
		}
		switch f[0] {
		case "pre-commit", "prepare-commit-msg", "commit-msg":
			return f[0], n, true
		}
	}
	return "", 0, false
}

// gitWrapped runs git with args through sh, which exports its own pid
// (git's, after exec) as DEBUSSY_COMMIT_PID: the shims act only for hooks
// this git runs, never for a git a hook runs or a background gc.
func (r *Repo) gitWrapped(ctx context.Context, o gitRun, s *shimDir, args ...string) ([]byte, error) {
	sh := []string{"-c", `DEBUSSY_COMMIT_PID=$$; export DEBUSSY_COMMIT_PID; exec "$@"`, "sh", r.gitBin}
	return r.run(ctx, o, s.sh, append(sh, args...)...)
}

// goneObjects are the objects gone user files held: a file's blob (a
// symlink, a nested repository or an empty file says nothing).
func goneObjects(gone map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, fp := range gone {
		if fp != "" && fp != emptyBlob && !strings.HasPrefix(fp, "link:") {
			out[fp] = true
		}
	}
	return out
}
