package gitcommit

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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

// verdictWillRun says CommitAll's verdict can run, so what debussy cannot
// convert can be left to git.
func (r *Repo) verdictWillRun() bool { return r.verdictGit() != "" }

// verdictGit is the git that stages CommitAll's verdict (and tells Open
// where the repository is): "" when the verdict is off, git is not on
// PATH, or the environment is unknown (WithGetenv without WithEnv: git
// would read other config than debussy).
func (r *Repo) verdictGit() string {
	if r.noVerdict || r.env == nil && !r.osEnv { // environ() is nil
		return ""
	}
	bin, err := exec.LookPath("git")
	if err != nil {
		return ""
	}
	return bin
}

// plantStaging, set by a test, corrupts debussy's staging before git's
// verdict: the divergence git must win over.
var plantStaging func([]*index.Entry) []*index.Entry

// verdictArgs, set by a test, are added to the verdict's git add: a
// refusal only git makes.
var verdictArgs []string

// environ is the environment getenv reads: WithEnv's, else the process's
// when getenv is os.Getenv; nil when it is unknown (WithGetenv alone).
func (r *Repo) environ() []string {
	if r.env == nil && r.osEnv {
		return os.Environ()
	}
	return r.env
}

// gitEnv is the environment the verdict's git runs with: the one debussy
// was opened with and the repository named explicitly as debussy resolved
// it (the index is the caller's to add). nil when that environment is
// unknown (WithGetenv without WithEnv): git would read other config than
// debussy.
func (r *Repo) gitEnv() []string {
	base := r.environ()
	if base == nil {
		return nil
	}
	env := append(withoutRepoEnv(base), "GIT_DIR="+r.gitDir, "GIT_WORK_TREE="+r.root)
	if r.getenv("GIT_COMMON_DIR") != "" {
		env = append(env, "GIT_COMMON_DIR="+r.commonDir)
	}
	return append(env, r.objectEnvVars()...)
}

// verdict has git (bin, verdictGit's answer) stage the worktree on a copy
// of the index as it was before debussy staged (same bytes, same mtime, so
// git's racy check is the user's), and returns mine (s's staging) with
// every path where git's entry differs (mode, blob, stage, intent-to-add,
// skip-worktree, assume-unchanged) replaced by git's, listing them. The
// paths that are debussy's decision (s.ownPaths: Exclude, Never, .debussy/)
// keep its entries. It returns mine unchanged when git is not installed or
// cannot run, and a *GitRefusedError when git add -A fails. staged says
// git's verdict was had (Commit.StagedByGit).
//
// The paths s left to git (errDeferToGit) are replaced, not reported.
func (r *Repo) verdict(bin string, s *stager, cfg gitConfig) (entries []*index.Entry, replaced []PathDisagreement, staged bool, err error) {
	mine, deferred := s.entries, s.deferred
	if plantStaging != nil {
		mine = plantStaging(mine)
	}
	if bin == "" {
		return skipVerdict(mine, deferred)
	}
	own, trustCtime := s.ownPaths(), cfg.bool("core.trustCtime", true)
	tmp, err := os.MkdirTemp("", "debussy-verdict-")
	if err != nil {
		r.log.Warn("git's verdict skipped", "err", err)
		return skipVerdict(mine, deferred)
	}
	defer os.RemoveAll(tmp)
	tmpIndex := filepath.Join(tmp, "index")
	orig, err := os.ReadFile(r.indexFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, false, fmt.Errorf("read index: %w", err)
	}
	fi, _ := os.Stat(r.indexFile)

	ctx, cancel := context.WithTimeout(context.Background(), verdictTimeout)
	defer cancel()
	if orig != nil {
		if err := os.WriteFile(tmpIndex, orig, 0o600); err != nil {
			r.log.Warn("git's verdict skipped", "err", err)
			return skipVerdict(mine, deferred)
		}
		_ = os.Chtimes(tmpIndex, fi.ModTime(), fi.ModTime())
	}
	// The paths that are debussy's decision are ignored for git, through
	// a copy of the user's excludes file: git would otherwise hash (and
	// write objects for) the user's untracked files and .debussy/ at every
	// commit, and refuse a nested repository of the user's without a
	// commit.
	excludes := filepath.Join(tmp, "exclude")
	if err := os.WriteFile(excludes, own.excludesFile(r.excludesFile(cfg)), 0o600); err != nil {
		r.log.Warn("git's verdict skipped", "err", err)
		return skipVerdict(mine, deferred)
	}
	v := &verifier{ctx: ctx, bin: bin, root: r.root, env: r.gitEnv(), index: tmpIndex} // gitEnv is known: bin is set
	_, stderr, err := v.run(nil, append([]string{"-c", "core.excludesFile=" + excludes, "add", "-A"}, verdictArgs...)...)
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && ctx.Err() == nil && exit.ExitCode() > 0 {
			return nil, nil, false, &GitRefusedError{Output: stderr}
		}
		r.log.Warn("git's verdict skipped: git add -A did not finish", "err", err, "stderr", stderr)
		return skipVerdict(mine, deferred)
	}
	b, err := os.ReadFile(tmpIndex)
	if errors.Is(err, fs.ErrNotExist) {
		b, err = emptyIndex, nil // nothing to stage and no index: git wrote none
	}
	if err != nil {
		return mine, nil, false, fmt.Errorf("read git's index: %w", err)
	}
	gidx, gvalid, ok, err := decodeIndex(b)
	if err != nil || !ok {
		r.log.Warn("git's verdict skipped: its index is in a format debussy does not read", "err", err)
		return skipVerdict(mine, deferred)
	}
	var indexSec int64
	if fi != nil {
		indexSec = fi.ModTime().Unix()
	}
	// The index as it was is decoded only once a path differs: on most
	// commits none does.
	var origAt map[string]*index.Entry
	var origValid map[string]bool
	keep := func(name string, m, g *index.Entry) bool {
		if own.has(name) {
			return true
		}
		if origAt == nil {
			origAt = map[string]*index.Entry{}
			var origIdx *index.Index
			if origIdx, origValid, _, _ = decodeIndex(orig); origIdx != nil { // none when there was no index
				for _, e := range origIdx.Entries {
					if e.Stage == 0 {
						origAt[e.Name] = e
					}
				}
			}
		}
		return r.gitMissesEdit(name, m, g, origAt[name], origValid[name], indexSec, trustCtime)
	}
	out, pds := r.mergeVerdict(mine, gidx.Entries, gvalid, keep)
	pds = slices.DeleteFunc(pds, func(pd PathDisagreement) bool { return slices.Contains(deferred, pd.Path) })
	return out, pds, true, nil
}

// skipVerdict keeps debussy's staging when git's verdict cannot be had,
// unless a path was left to git: then nothing is committed.
func skipVerdict(mine []*index.Entry, deferred []string) ([]*index.Entry, []PathDisagreement, bool, error) {
	if len(deferred) > 0 {
		return nil, nil, false, &UnsupportedError{Feature: "the working-tree-encoding attribute", Detail: deferred[0] + " was left to git, which could not run",
			WayOut: "make sure git runs (it converts such files), or commit them with git yourself"}
	}
	return mine, nil, false, nil
}

type entryKey struct {
	name  string
	stage index.Stage
}

// mergeVerdict takes git's entry (or its absence) for every path where it
// differs from mine, except where keep says mine stands.
func (r *Repo) mergeVerdict(mine, theirs []*index.Entry, valid map[string]bool, keep func(name string, m, g *index.Entry) bool) ([]*index.Entry, []PathDisagreement) {
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
		if m != nil && g != nil && m.Mode == g.Mode && m.Hash == g.Hash && m.IntentToAdd == g.IntentToAdd &&
			m.SkipWorktree == g.SkipWorktree && r.assumeValid[k.name] == valid[k.name] {
			return // the common case, without formatting
		}
		ms, gs := side(m, m != nil && r.assumeValid[k.name]), side(g, g != nil && valid[k.name])
		if ms == gs || keep(k.name, m, g) {
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
		return mine, nil
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
	return out, pds
}

// ownSet is the paths whose fate is debussy's decision, not git's: its
// state directory, the user's untracked files it was told to keep out
// (while unchanged: a changed one is committed by both) and the Never
// copies.
type ownSet struct{ roots []string }

func (o ownSet) has(p string) bool {
	return p == stateDir || isStateDirPath(p) || underAny(p, o.roots)
}

func (s *stager) ownPaths() ownSet {
	var o ownSet
	for p := range s.exclude {
		o.roots = append(o.roots, p)
	}
	for p := range s.never {
		o.roots = append(o.roots, p)
	}
	slices.Sort(o.roots)
	return o
}

// excludesFile is the user's excludes file (path, "" for none) followed
// by a pattern for .debussy/ and one anchored, literal pattern per own path.
func (o ownSet) excludesFile(user string) []byte {
	var b []byte
	if user != "" {
		b, _ = os.ReadFile(user)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			b = append(b, '\n')
		}
	}
	b = append(b, stateDir+"/\n"...)
	for _, p := range o.roots {
		b = append(b, '/')
		for i, c := range []byte(p) {
			if strings.IndexByte("*?[\\", c) >= 0 || c == ' ' && i == len(p)-1 {
				b = append(b, '\\')
			}
			b = append(b, c)
		}
		b = append(b, '\n')
	}
	return b
}

// emptyIndex is an index file of no entries (version 2).
var emptyIndex = func() []byte {
	b := []byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00")
	sum := sha1.Sum(b)
	return append(b, sum[:]...)
}()

// WriteRepro writes into dir the reproduction of the paths where git's
// verdict replaced debussy's staging in commit (Commit.GitReplaced), as
// Verify writes one for a disagreement, and returns its name.
func (r *Repo) WriteRepro(dir, commit string, pds []PathDisagreement) (string, error) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return "", ErrNoGit
	}
	env := r.gitEnv()
	if env == nil {
		env = withoutVar(os.Environ(), "GIT_INDEX_FILE")
	}
	v := &verifier{ctx: context.Background(), bin: bin, root: r.root, env: env}
	name, err := v.writeRepro(dir, commit, pds)
	if err != nil {
		return "", fmt.Errorf("write reproduction: %w", err)
	}
	return name, nil
}
