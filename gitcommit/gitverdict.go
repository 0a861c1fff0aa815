package gitcommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// git's verdict: where a git binary is on PATH, CommitAll has it stage the
// tree too, from the index the commit starts from, and commits what git
// staged wherever the two differ. Three rounds against real git each found
// new cases where debussy's own staging differed; this makes a wrong commit
// impossible wherever git can tell, and turns each difference into a
// report (Commit.GitReplaced, a reproduction file) instead.

// verdictTimeout bounds git's staging; past it debussy's own commit stands.
const verdictTimeout = 2 * time.Minute

// ErrGitRefused means `git add -A` failed where debussy would have
// committed: git would not have committed either (GitRefusedError).
var ErrGitRefused = errors.New("git add -A refuses the worktree")

// GitRefusedError is `git add -A` failing on the worktree, with its output
// (a new file outside a sparse-checkout definition, a filter git cannot
// run). Nothing is committed and the work stays in the tree, as after a
// failed `git add -A && git commit`.
type GitRefusedError struct{ Output string }

func (e *GitRefusedError) Error() string {
	return "git add -A refuses the worktree, so debussy does not commit either: " + strings.TrimSpace(e.Output)
}

func (e *GitRefusedError) Unwrap() error { return ErrGitRefused }

// withoutVerdict turns the verdict off, for tests that hold debussy's own
// staging to git.
func withoutVerdict() Option { return func(r *Repo) { r.noVerdict = true } }

// errDeferToGit is a conversion debussy does not do itself
// (working-tree-encoding) met while git's verdict is to stage the commit:
// the path is left to git, not refused.
var errDeferToGit = errors.New("left to git's verdict")

// verdictWillRun says CommitAll's verdict can run (git on PATH, the
// environment known), so what debussy cannot convert can be left to git.
func (r *Repo) verdictWillRun() bool {
	if r.noVerdict || r.gitEnv("x") == nil {
		return false
	}
	_, err := exec.LookPath("git")
	return err == nil
}

// plantStaging, set by a test, corrupts debussy's staging before git's
// verdict: the divergence git must win over.
var plantStaging func([]*index.Entry) []*index.Entry

// checkedAtCommit records the commits whose tree git staged at commit time
// (before the hooks ran): Verify takes that as its answer, since a hook
// that formats, stages or amends afterwards changes the worktree and index
// it would replay, not what git committed.
var checkedAtCommit sync.Map // hash → []PathDisagreement replaced

// gitEnv is the environment the verdict's git runs with: the one debussy
// was opened with, the repository named explicitly as debussy resolved it,
// and the index a temporary one. nil when that environment is unknown
// (WithGetenv without WithEnv): git would read other config than debussy.
func (r *Repo) gitEnv(indexFile string) []string {
	base := r.env
	if base == nil {
		if !r.osEnv {
			return nil
		}
		base = os.Environ()
	}
	env := append(withoutRepoEnv(base), "GIT_DIR="+r.gitDir, "GIT_WORK_TREE="+r.root, "GIT_INDEX_FILE="+indexFile)
	for _, k := range []string{"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"} {
		if v := r.getenv(k); v != "" {
			if k == "GIT_OBJECT_DIRECTORY" {
				v = absFrom(r.root, v)
			}
			env = append(env, k+"="+v)
		}
	}
	return env
}

// verdict has git stage the worktree on a copy of the index as it was
// before debussy staged (same bytes, same mtime, so git's racy check is the
// user's), and returns mine with every path where git's entry differs (mode,
// blob, stage, intent-to-add, skip-worktree, assume-unchanged) replaced by
// git's, listing them. own paths are debussy's decision (Exclude, Never,
// .debussy/) and keep its entries. It returns mine unchanged when git is
// not installed or cannot run, and a *GitRefusedError when git add -A fails.
//
// deferred paths were left to git (errDeferToGit): replaced, not reported.
func (r *Repo) verdict(mine []*index.Entry, own func(string) bool, deferred []string) ([]*index.Entry, []PathDisagreement, error) {
	r.verdictRan = false
	if plantStaging != nil {
		mine = plantStaging(mine)
	}
	bin, err := exec.LookPath("git")
	if err != nil || r.noVerdict {
		return skipVerdict(mine, deferred)
	}
	tmp, err := os.MkdirTemp("", "debussy-verdict-")
	if err != nil {
		r.log.Warn("git's verdict skipped", "err", err)
		return skipVerdict(mine, deferred)
	}
	defer os.RemoveAll(tmp)
	tmpIndex := filepath.Join(tmp, "index")
	env := r.gitEnv(tmpIndex)
	if env == nil {
		return skipVerdict(mine, deferred)
	}
	if b, err := os.ReadFile(r.indexFile); err == nil {
		fi, serr := os.Stat(r.indexFile)
		if werr := os.WriteFile(tmpIndex, b, 0o600); werr != nil || serr != nil {
			r.log.Warn("git's verdict skipped", "err", errors.Join(werr, serr))
			return skipVerdict(mine, deferred)
		}
		_ = os.Chtimes(tmpIndex, fi.ModTime(), fi.ModTime())
	} else if !errors.Is(err, fs.ErrNotExist) {
		return mine, nil, fmt.Errorf("read index: %w", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), verdictTimeout)
	defer cancel()
	// No hooks: post-index-change would fire for the temporary index.
	cmd := exec.CommandContext(ctx, bin, "-c", "core.hooksPath="+os.DevNull, "add", "-A")
	cmd.Dir, cmd.Env = r.root, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && ctx.Err() == nil && exit.ExitCode() > 0 {
			return nil, nil, &GitRefusedError{Output: stderr.String()}
		}
		r.log.Warn("git's verdict skipped: git add -A did not finish", "err", err, "stderr", stderr.String())
		return skipVerdict(mine, deferred)
	}
	b, err := os.ReadFile(tmpIndex)
	if err != nil {
		return mine, nil, fmt.Errorf("read git's index: %w", err)
	}
	gidx, gvalid, ok, err := decodeIndex(b)
	if err != nil || !ok {
		r.log.Warn("git's verdict skipped: its index is in a format debussy does not read", "err", err)
		return skipVerdict(mine, deferred)
	}
	r.verdictRan = true
	out, pds, err := r.mergeVerdict(mine, gidx.Entries, gvalid, own)
	pds = slices.DeleteFunc(pds, func(pd PathDisagreement) bool { return slices.Contains(deferred, pd.Path) })
	return out, pds, err
}

// skipVerdict keeps debussy's staging when git's verdict cannot be had,
// unless a path was left to git: then nothing is committed.
func skipVerdict(mine []*index.Entry, deferred []string) ([]*index.Entry, []PathDisagreement, error) {
	if len(deferred) > 0 {
		return nil, nil, &UnsupportedError{Feature: "the working-tree-encoding attribute", Detail: deferred[0] + " was left to git, which could not run",
			WayOut: "make sure git runs (it converts such files), or commit them with git yourself"}
	}
	return mine, nil, nil
}

type entryKey struct {
	name  string
	stage index.Stage
}

// mergeVerdict takes git's entry (or its absence) for every path where it
// differs from mine, except own paths.
func (r *Repo) mergeVerdict(mine, theirs []*index.Entry, valid map[string]bool, own func(string) bool) ([]*index.Entry, []PathDisagreement, error) {
	at := func(es []*index.Entry) map[entryKey]*index.Entry {
		m := make(map[entryKey]*index.Entry, len(es))
		for _, e := range es {
			m[entryKey{e.Name, e.Stage}] = e
		}
		return m
	}
	mm, gm := at(mine), at(theirs)
	side := func(e *index.Entry, flagged bool) string {
		if e == nil {
			return ""
		}
		s := fmt.Sprintf("%06o %s", uint32(e.Mode), e.Hash)
		if e.Stage != 0 {
			s += fmt.Sprintf(" stage %d", e.Stage)
		}
		for _, f := range []struct {
			on   bool
			name string
		}{{e.IntentToAdd, "intent-to-add"}, {e.SkipWorktree, "skip-worktree"}, {flagged, "assume-unchanged"}} {
			if f.on {
				s += " " + f.name
			}
		}
		return s
	}
	var pds []PathDisagreement
	replace := map[entryKey]bool{}
	check := func(k entryKey) {
		m, g := mm[k], gm[k]
		ms, gs := side(m, m != nil && r.assumeValid[k.name]), side(g, g != nil && valid[k.name])
		if ms == gs || own(k.name) {
			return
		}
		replace[k] = true
		pds = append(pds, PathDisagreement{Path: k.name, Committed: ms, Git: gs})
	}
	for k := range mm {
		check(k)
	}
	for k := range gm {
		if mm[k] == nil {
			check(k)
		}
	}
	if len(pds) == 0 {
		return mine, nil, nil
	}
	out := make([]*index.Entry, 0, len(mine))
	for _, e := range mine {
		if !replace[entryKey{e.Name, e.Stage}] {
			out = append(out, e)
		}
	}
	if r.assumeValid == nil {
		r.assumeValid = map[string]bool{}
	}
	for k := range replace {
		delete(r.assumeValid, k.name)
		if g := gm[k]; g != nil {
			out = append(out, g)
			if valid[k.name] {
				r.assumeValid[k.name] = true
			}
		}
	}
	sortEntries(out)
	slices.SortFunc(pds, func(a, b PathDisagreement) int { return strings.Compare(a.Path, b.Path) })
	return out, pds, nil
}

// ownPaths is the set of paths whose fate is debussy's decision, not git's:
// its state directory, the user's untracked files it was told to keep out
// (while unchanged) and the Never copies.
func (s *stager) ownPaths() func(string) bool {
	var dirs []string
	for p := range s.exclude {
		dirs = append(dirs, p) // a changed one is committed by both
	}
	for p := range s.never {
		dirs = append(dirs, p)
	}
	return func(p string) bool {
		return p == stateDir || isStateDirPath(p) || underAny(p, dirs)
	}
}

// WriteRepro writes into dir the reproduction of the paths where git's
// verdict replaced debussy's staging in commit (Commit.GitReplaced), as
// Verify writes one for a disagreement, and returns its name.
func (r *Repo) WriteRepro(dir, commit string, pds []PathDisagreement) (string, error) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return "", ErrNoGit
	}
	env := r.gitEnv("")
	if env == nil {
		env = os.Environ()
	}
	v := &verifier{ctx: context.Background(), bin: bin, root: r.root, env: withoutVar(env, "GIT_INDEX_FILE")}
	name, err := v.writeRepro(dir, commit, pds)
	if err != nil {
		return "", fmt.Errorf("write reproduction: %w", err)
	}
	return name, nil
}
