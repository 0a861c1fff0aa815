package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Without git, go-git stages and writes the commit (this file and
// stage.go's stageByGoGit), only where its answer is git's: Preflight
// and every commit refuse, naming the feature, a repository where it
// would not be (gitless.go). So no hook runs (a repository with one is
// refused), nothing is signed, the message is cleaned up as `git commit
// -m` does without an editor, and the reflog line is git's.

func (r *Repo) commitByGoGit(ctx context.Context, msg string, o commitOptions) (_ Commit, err error) {
	cfg, err := r.readConfig(ctx)
	if err != nil {
		return Commit{}, err
	}
	if err := errors.Join(r.gitlessConfig(cfg)...); err != nil {
		return Commit{}, err
	}
	author, committer, err := r.identity(ctx, cfg)
	if err != nil {
		return Commit{}, err
	}
	h, err := r.readHead()
	if err != nil {
		return Commit{}, err
	}
	parentTree, err := r.treeOf(h)
	if err != nil {
		return Commit{}, err
	}
	never, err := r.notInHead(parentTree, o.never)
	if err != nil {
		return Commit{}, err
	}
	lock, err := r.acquireLock(r.indexFile)
	if err != nil {
		return Commit{}, err
	}
	defer lock.release()
	if err := lock.seed(ctx, r, o.from); err != nil {
		return Commit{}, err
	}
	var parents []plumbing.Hash
	if !h.hash.IsZero() {
		parents = []plumbing.Hash{h.hash}
	}
	st, err := r.stageByGoGit(lock.lockPath(), parentTree, o, never)
	if err != nil {
		return Commit{}, err
	}
	r.shared = parseSharedPerm(strings.TrimSpace(cfg.get("core.sharedRepository")), cfg.has("core.sharedRepository"), cfg.bare["core.sharedrepository"])
	op, err := r.commitState()
	if err != nil {
		return Commit{}, err
	}
	emptyTree := st.tree == emptyTreeHash || st.tree.IsZero()
	if h.hash.IsZero() && emptyTree || !h.hash.IsZero() && st.tree == parentTree && len(op.parents) == 0 && !o.allowEmpty {
		// Keep what was staged and the refreshed stat data, so the next
		// check is cheap.
		if err := lock.commitFile(); err != nil {
			r.log.Warn("write refreshed index", "err", err)
		}
		return Commit{}, ErrNothingToCommit
	}
	changes, err := r.diffTrees(parentTree, st.tree)
	if err != nil {
		return Commit{}, err
	}
	if err := r.installIndex(ctx, lock); err != nil {
		return Commit{}, err
	}
	defer r.restoreIndex(ctx, &err)
	if len(st.changed) > 0 && o.note != nil {
		msg = o.note(msg, st.changed)
	}
	if strings.TrimSpace(msg) == "" {
		msg = "debussy: checkpoint" // git would refuse; losing the work is worse
	}
	if msg, err = cleanupMessage(cfg, msg); err != nil {
		return Commit{}, err
	}
	parents = append(parents, op.parents...)
	if op.author != nil {
		author = *op.author
	}
	c := &object.Commit{
		Author:       author,
		Committer:    committer,
		Message:      msg,
		TreeHash:     st.tree,
		ParentHashes: parents,
	}
	obj := r.store.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return Commit{}, fmt.Errorf("encode: %w", err)
	}
	if r.shared != 0 {
		if _, err := r.objectDir(obj.Hash()); err != nil {
			return Commit{}, fmt.Errorf("write commit object: %w", err)
		}
	}
	next, err := r.store.SetEncodedObject(obj)
	if err != nil {
		return Commit{}, fmt.Errorf("write commit object: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return Commit{}, context.Cause(ctx) // interrupted: the branch stays where it was
	}
	if o.written != nil {
		if err := o.written(next.String()); err != nil {
			return Commit{}, err
		}
	}
	reflog := reflogOpts{action: reflogAction(r.getenv("GIT_REFLOG_ACTION"), h, op), onlyExisting: !logAllRefUpdates(cfg)}
	if err := r.updateRef(h, next, committer, subjectOf(msg), reflog); err != nil {
		return Commit{}, err
	}
	op.finish(r)
	r.log.Debug("committed", "commit", Short(next.String()), "files", len(changes))
	return Commit{Hash: next.String(), Files: len(changes), Changed: st.changed, Unstaged: st.unstaged}, nil
}

// cleanupMessage cleans the message as `git commit -m` does without an
// editor (commit.cleanup "default", "whitespace" and "scissors" are
// whitespace; "verbatim" keeps it; "strip" is refused by gitlessConfig),
// then as git's commit_tree does: a NUL byte is refused, bytes that are
// not UTF-8 are read as Latin-1. An empty result aborts the commit, as in
// git.
func cleanupMessage(cfg gitConfig, msg string) (string, error) {
	if strings.ToLower(cfg.get("commit.cleanup")) != "verbatim" {
		msg = stripSpace(msg)
	}
	if strings.TrimSpace(msg) == "" {
		return "", &HookError{Hook: "commit-msg", ExitCode: 0,
			Output: "the message is empty; git aborts such a commit"}
	}
	if strings.IndexByte(msg, 0) >= 0 {
		return "", errors.New("a NUL byte in commit log message not allowed")
	}
	return fixUTF8(msg), nil
}

// stripSpace is `git stripspace`: trailing spaces cut, runs of blank lines
// made one, none at the start or the end, a final newline.
func stripSpace(msg string) string {
	var b strings.Builder
	blank := false
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimRight(line, " \t\r\v\f")
		if line == "" {
			blank = b.Len() > 0
			continue
		}
		if blank {
			b.WriteByte('\n')
			blank = false
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// fixUTF8 is git's verify_utf8: each byte that does not start valid UTF-8
// (git's rules: no overlong forms, surrogates, code points past U+10FFFF,
// nor the non-characters U+xxFFFE/F and U+FDD0..FDEF) is taken as a
// Latin-1 character and written as UTF-8.
func fixUTF8(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		valid := !(r == utf8.RuneError && n == 1) && (r&0x1ffffe) != 0xfffe && (r < 0xfdd0 || r > 0xfdef)
		if s[i] < 0x80 || valid {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		b.WriteRune(rune(s[i]))
		i++
	}
	return b.String()
}

// reflogAction is what git commit's reflog line starts with:
// GIT_REFLOG_ACTION, else "commit" with the kind of commit.
func reflogAction(env string, h head, op opState) string {
	switch {
	case env != "":
		return env
	case h.hash.IsZero():
		return "commit (initial)"
	case op.reflog != "":
		return "commit (" + op.reflog + ")"
	}
	return "commit"
}

// subjectOf is the reflog's subject: the message's first line.
func subjectOf(msg string) string {
	first, _, _ := strings.Cut(msg, "\n")
	return first
}

// reflogMessage is git's copy_reflog_msg: runs of whitespace become one
// space, none at the start or the end.
func reflogMessage(s string) string {
	var b strings.Builder
	space := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		isSpace := c == ' ' || c == '\t' || c == '\n' || c == '\r'
		if space && isSpace {
			continue
		}
		space = isSpace
		if isSpace {
			c = ' '
		}
		b.WriteByte(c)
	}
	return strings.TrimRight(b.String(), " ")
}
