package gitcommit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// claude's own sandbox (the CLI's bubblewrap around each Bash command)
// keeps a command from writing git's config by binding the config's family
// read-only: <common dir>/config.lock and config.worktree, and each linked
// worktree's config.worktree. Where such a file does not exist it creates
// an empty one as the mount point for the command's lifetime and removes
// it after (measured on 2.1.197: .git/config.lock present on the host
// while a `sleep 2` ran). Two claude processes that share a git dir —
// phases at once in their worktrees — race on that: one sees the other's
// placeholder, asks bubblewrap to bind it, and the other removes it first;
// the command fails before it runs ("bwrap: Can't find source path
// …/.git/config.lock", anthropics/claude-code#79248; CI hit it in
// TestFailFastE2E). While phases run at once debussy holds those files
// itself, so every claude sees them there throughout and binds them as
// they are: nothing is created or removed under a command.
//
// Holding config.lock is holding git's config lock: `git config` and the
// like fail with "File exists" meanwhile, as they already do while any
// sandboxed command runs (#78818). debussy writes no config; `git branch
// -D` still deletes the branch (warning that the config was not updated).
// The lock's owner record (lockowner.go) lets the next run remove it after
// a kill -9, like any lock of debussy's.

// Placeholders are the files HoldSandboxPlaceholders created.
type Placeholders struct {
	made  []string
	owner *lockFile // config.lock's owner record
}

// HoldSandboxPlaceholders creates, where they do not exist, the files of
// git's config family that claude's sandbox binds read-only: config.lock
// and config.worktree of the common dir, and a linked worktree's own
// config.worktree. A file that exists
// is left alone — config.lock then belongs to a git writing the config,
// whose own lock it is.
func (r *Repo) HoldSandboxPlaceholders() (*Placeholders, error) {
	p := &Placeholders{}
	made := func(name string) (bool, error) {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		if err != nil {
			p.Release()
			return false, fmt.Errorf("hold %s for claude's sandbox: %w", name, err)
		}
		_ = f.Close()
		p.made = append(p.made, name)
		return true, nil
	}
	if r.gitDir != r.commonDir { // a linked worktree's own
		if _, err := made(filepath.Join(r.gitDir, "config.worktree")); err != nil {
			return nil, err
		}
	}
	// The common dir's, which every claude of the repository binds — also
	// when debussy itself runs in a linked worktree.
	if _, err := made(filepath.Join(r.commonDir, "config.worktree")); err != nil {
		return nil, err
	}
	ok, err := made(filepath.Join(r.commonDir, "config.lock"))
	if err != nil {
		return nil, err
	}
	if ok {
		p.owner = &lockFile{path: filepath.Join(r.commonDir, "config")}
		r.recordOwner(p.owner)
	}
	return p, nil
}

// Release removes the placeholders that are still empty files (one that
// was written is not a placeholder any more).
func (p *Placeholders) Release() {
	if p == nil {
		return
	}
	if p.owner != nil {
		p.owner.dropOwner()
	}
	for _, name := range p.made {
		if fi, err := os.Lstat(name); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			_ = os.Remove(name)
		}
	}
	p.made = nil
}
