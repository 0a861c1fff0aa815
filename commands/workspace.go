package commands

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/secrets"
)

// workspace is the repository a command works in and its resolved config.
type workspace struct {
	Root string // repository root ("" outside a git repository)
	Repo *gitcommit.Repo
	// RepoErr is why a repository that is there could not be opened (a
	// SHA-256 one, a broken config); Repo is then nil.
	RepoErr error
	Config  config.Config
	Source  config.Source
}

// workDir is the directory the command runs in.
func (e *Env) workDir() (string, error) {
	if e.Dir != "" {
		return e.Dir, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find working directory: %w", err)
	}
	return dir, nil
}

// findRepo returns the repository around the working directory, if any,
// and the root debussy works in: the repository's, else the directory.
func (e *Env) findRepo() (*gitcommit.Repo, string, error) {
	repo, root, _, err := e.openRepo()
	return repo, root, err
}

// openRepo is findRepo that also says why a repository that is there could
// not be opened (openErr), so run and check can tell the user instead of
// "not inside a git repository".
func (e *Env) openRepo() (repo *gitcommit.Repo, root string, openErr, err error) {
	dir, err := e.workDir()
	if err != nil {
		return nil, "", nil, err
	}
	repo, openErr = gitcommit.Open(dir)
	if openErr == nil {
		return repo, repo.Root(), nil, nil
	}
	if errors.Is(openErr, gitcommit.ErrNotRepo) {
		openErr = nil
	}
	return nil, dir, openErr, nil
}

// loadWorkspace finds the repository and resolves the config.
func (e *Env) loadWorkspace(configFile string, set func(*config.Config)) (*workspace, error) {
	repo, root, openErr, err := e.openRepo()
	if err != nil {
		return nil, err
	}
	ws := &workspace{Root: root, Repo: repo, RepoErr: openErr}
	cfg, src, err := config.Load(ws.Root, e.abs(configFile), e.Environ())
	if err != nil {
		return nil, err
	}
	if set != nil {
		set(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		return nil, flagNamesErrors(err)
	}
	// One redactor for everything this process writes, prints or sends.
	red, err := secrets.NewWithDeny(cfg.RedactAllow, cfg.RedactDeny)
	if err != nil {
		return nil, fmt.Errorf("load redact_allow and redact_deny: %w: %w", config.ErrInvalid, err)
	}
	secrets.SetDefault(red)
	ws.Config, ws.Source = cfg, src
	return ws, nil
}

// abs resolves a user-given path against the command's directory.
func (e *Env) abs(p string) string {
	if p == "" || filepath.IsAbs(p) || e.Dir == "" {
		return p
	}
	return filepath.Join(e.Dir, p)
}
