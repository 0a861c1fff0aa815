package gitcommit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrDubiousOwnership means git refuses the repository: it is owned by
// another user and safe.directory does not name it (see UnsafeRepoError).
var ErrDubiousOwnership = errors.New("detected dubious ownership in repository")

// UnsafeRepoError is git's "detected dubious ownership" refusal. A
// repository someone else owns can hold hooks, filters and config that run
// code as whoever commits in it; git refuses to work there, and so does
// debussy, before any hook of it runs.
type UnsafeRepoError struct {
	Path  string // the worktree (or git dir) git names
	Owned string // the path found owned by someone else
	UID   int    // its owner
}

func (e *UnsafeRepoError) Error() string {
	return fmt.Sprintf("detected dubious ownership in repository at %s: %s is owned by uid %d, not by you; git refuses to work in it "+
		"(its hooks and config would run as you), and so does debussy. If you trust it: git config --global --add safe.directory %s",
		e.Path, e.Owned, e.UID, e.Path)
}

func (e *UnsafeRepoError) Unwrap() error { return ErrDubiousOwnership }

// checkOwnership is git's ensure_valid_ownership (setup.c), which git
// applies to a repository found by discovery (never to one GIT_DIR names):
// the .git file if there is one, the worktree and the git dir must be owned
// by the user (as root: by root, or by SUDO_UID), unless safe.directory in
// the system, global or command-line config names the worktree (or "*").
func (r *Repo) checkOwnership(worktree string) error {
	var owned string
	var uid int
	dotGitFile := filepath.Join(worktree, ".git")
	if fi, err := os.Lstat(dotGitFile); err != nil || fi.IsDir() {
		dotGitFile = ""
	}
	for _, p := range []string{dotGitFile, worktree, r.gitDir} {
		if p == "" {
			continue
		}
		if ok, u := r.ownedByUser(p); !ok {
			owned, uid = p, u
			break
		}
	}
	if owned == "" {
		return nil
	}
	path := worktree
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if r.safeDirectory(path) {
		return nil
	}
	return &UnsafeRepoError{Path: path, Owned: owned, UID: uid}
}

// ownedByUser is git's is_path_owned_by_current_uid.
func (r *Repo) ownedByUser(path string) (bool, int) {
	fi, err := os.Lstat(path)
	if err != nil {
		return false, -1
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true, 0 // no owner to compare (not Unix)
	}
	owner, euid := int(st.Uid), os.Geteuid()
	if euid == 0 {
		if owner == 0 {
			return true, owner
		}
		if s, err := strconv.Atoi(r.getenv("SUDO_UID")); err == nil {
			euid = s
		}
	}
	return owner == euid, owner
}

// safeDirectory reads safe.directory from the protected config (system,
// global, command line; never the repository's own) as git's
// safe_directory_cb does: "" resets, "*" trusts all, "<dir>/*" a prefix,
// anything else one directory. A bare key ("git -c safe.directory")
// resets, as "" does.
func (r *Repo) safeDirectory(path string) bool {
	c := gitConfig{values: map[string]string{}, bare: map[string]bool{}, all: map[string][]string{}}
	for _, f := range r.configFiles() {
		if f != filepath.Join(r.commonDir, "config") {
			_ = r.readConfigFile(c, f, 0)
		}
	}
	_ = r.readEnvConfig(c) // a bogus GIT_CONFIG_PARAMETERS is readConfig's to report
	safe := false
	for _, v := range c.all["safe.directory"] {
		switch {
		case v == "":
			safe = false
		case v == "*":
			safe = true
		default:
			v = r.expandPath(v, "")
			if prefix, ok := strings.CutSuffix(v, "/*"); ok {
				if strings.HasPrefix(path, strings.TrimSuffix(prefix, "/")+"/") {
					safe = true
				}
				continue
			}
			if real, err := filepath.EvalSymlinks(v); err == nil {
				v = real
			}
			if filepath.Clean(v) == path {
				safe = true
			}
		}
	}
	return safe
}
