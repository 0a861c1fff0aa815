package gitcommit

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/debussy-dev/debussy/internal/text"
)

// git commit runs its hooks from a directory of debussy's (core.hooksPath,
// for that one git): a shim per hook of the user's, which runs the user's
// hook with the environment git would have given it and notes its exit
// status (so a refusal is told from "nothing to commit"), and a
// reference-transaction hook that, in the transaction's "prepared" state,
// asks debussy over a pair of FIFOs whether the commit may land. The user's
// own reference-transaction hook runs first, from debussy's. The shims act
// only for the git commit debussy started (its pid); a git that a hook or
// a background gc runs gets the user's hooks as they are.

type shimDir struct {
	dir   string // the hooks directory git commit is given
	hooks string // the user's
	sh    string // the shell the shims run in
	// restore is the shell that puts a clean filter's environment back as
	// the user's git add would give it (restoreEnv).
	restore string
	// userHooks says the user has hooks of their own (any of them may
	// stage, so the index a commit leaves is not known without reading it).
	userHooks bool
}

// restoreEnv is shell that undoes, for the user's code, what debussy's own
// options change in git's environment: the `git -c` options (passed on in
// GIT_CONFIG_PARAMETERS) and, for a clean filter git add runs, the private
// index's path.
func (r *Repo) restoreEnv() (config, index string) {
	env := getenvOf(r.userEnv())
	if v := env("GIT_CONFIG_PARAMETERS"); v != "" {
		config = "GIT_CONFIG_PARAMETERS=" + text.ShellQuote(v) + "; export GIT_CONFIG_PARAMETERS;"
	} else {
		config = "unset GIT_CONFIG_PARAMETERS;"
	}
	if v := env("GIT_INDEX_FILE"); v != "" {
		index = "GIT_INDEX_FILE=" + text.ShellQuote(v) + "; export GIT_INDEX_FILE;"
	} else {
		index = "unset GIT_INDEX_FILE;"
	}
	return config, index
}

// gitArgs are the -c options git add -A runs with: the shims as its hooks
// (post-index-change), and each clean filter run behind restore, so that
// neither sees debussy's options or its private index (the user's git add
// would show them neither).
func (s *shimDir) gitArgs(cfg gitConfig) []string {
	args := []string{"-c", "core.hooksPath=" + s.dir}
	for k, v := range cfg.values {
		if !strings.HasPrefix(k, "filter.") || v == "" {
			continue
		}
		switch {
		case strings.HasSuffix(k, ".clean"):
			// The command is expanded (%f): debussy's part keeps its '%'.
			args = append(args, "-c", k+"="+strings.ReplaceAll(s.restore, "%", "%%")+" "+v)
		case strings.HasSuffix(k, ".process"):
			args = append(args, "-c", k+"="+s.restore+" exec "+v)
		}
	}
	return args
}

func (s *shimDir) path(name string) string { return filepath.Join(s.dir, name) }

func (s *shimDir) remove() { _ = os.RemoveAll(s.dir) }

// hookShims writes the shims for the user's hooks in hooksDir; private is
// the private index, whose path a hook git add -A runs (post-index-change)
// is not shown, as the user's git add would not show it.
func (r *Repo) hookShims(hooksDir, private string) (*shimDir, error) {
	sh, err := lookSh()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "debussy-hooks-")
	if err != nil {
		return nil, err
	}
	s := &shimDir{dir: dir, hooks: hooksDir, sh: sh}
	ok := false
	defer func() {
		if !ok {
			s.remove()
		}
	}()
	// Before the user's hook runs, the environment is put back as git
	// would have it: without debussy's core.hooksPath (which `git -c`
	// passes on in GIT_CONFIG_PARAMETERS) and without the commit's pid.
	config, index := r.restoreEnv()
	s.restore = config + " " + index
	// A hook git commit runs sees the index git commit names; one git add
	// runs (post-index-change) would see the private one: not shown.
	restore := "unset DEBUSSY_COMMIT_PID\n" + config + "\n" +
		"if [ \"${GIT_INDEX_FILE-}\" = " + text.ShellQuote(private) + " ]; then " + index + " fi\n"
	head := "#!" + sh + "\nours=\n[ \"$PPID\" = \"${DEBUSSY_COMMIT_PID-}\" ] && ours=1\n" + restore
	entries, err := os.ReadDir(hooksDir)
	if err != nil && !os.IsNotExist(err) && !isNotDir(err) {
		return nil, fmt.Errorf("read the hooks: %w", err)
	}
	userRT := ""
	for _, e := range entries {
		name := e.Name()
		if !hasHook(hooksDir, name) {
			continue
		}
		user := filepath.Join(hooksDir, name)
		s.userHooks = s.userHooks || slices.Contains(commitHooks, name)
		if name == "reference-transaction" {
			userRT = user
			continue
		}
		script := head + "# debussy: the user's " + name + " hook, as git runs it\n" +
			text.ShellQuote(user) + " \"$@\"\nstatus=$?\n" +
			"[ -z \"$ours\" ] || echo " + text.ShellQuote(name) + " $status >> " + text.ShellQuote(s.path("status")) + "\n" +
			"exit $status\n"
		if err := os.WriteFile(s.path(name), []byte(script), 0o700); err != nil {
			return nil, err
		}
	}
	rt := head + "# debussy: lets the commit land once debussy has recorded it\n" +
		"if [ \"$1\" = prepared ] && [ -n \"$ours\" ]; then\n" +
		"\twhile IFS= read -r line; do printf '%s\\n' \"$line\"; done > " + text.ShellQuote(s.path("updates")) + " || exit 1\n"
	if userRT != "" {
		rt += "\t" + text.ShellQuote(userRT) + " \"$@\" < " + text.ShellQuote(s.path("updates")) + " || exit $?\n"
	}
	rt += "\techo go > " + text.ShellQuote(s.path("txn")) + " || exit 1\n" +
		"\tread -r answer < " + text.ShellQuote(s.path("ack")) + " || exit 1\n" +
		"\t[ \"$answer\" = ok ] || exit 1\n" +
		"\texit 0\nfi\n"
	if userRT != "" {
		rt += "exec " + text.ShellQuote(userRT) + " \"$@\"\n"
	}
	rt += "exit 0\n"
	if err := os.WriteFile(s.path("reference-transaction"), []byte(rt), 0o700); err != nil {
		return nil, err
	}
	for _, f := range []string{"txn", "ack"} {
		if err := syscall.Mkfifo(s.path(f), 0o600); err != nil {
			return nil, fmt.Errorf("make %s: %w", f, err)
		}
	}
	ok = true
	return s, nil
}

func isNotDir(err error) bool {
	pe, ok := err.(*os.PathError)
	return ok && pe.Err == syscall.ENOTDIR
}

// serve answers the commit's "prepared" transactions until stop is
// called: decide gets the commit HEAD is to move to and says whether it
// may. stop waits for an answer being given to finish.
func (s *shimDir) serve(h head, decide func(next plumbing.Hash) bool) (stop func(), err error) {
	// Both ends opened read-write: neither open blocks, and closing them
	// ends the reader.
	txn, err := os.OpenFile(s.path("txn"), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	ack, err := os.OpenFile(s.path("ack"), os.O_RDWR, 0)
	if err != nil {
		txn.Close()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		rd := bufio.NewReader(txn)
		for {
			if _, err := rd.ReadString('\n'); err != nil {
				return
			}
			reply := "ok\n"
			if next, found := s.headUpdate(); found && !decide(next) {
				reply = "no\n"
			}
			if _, err := ack.WriteString(reply); err != nil {
				return
			}
		}
	}()
	return func() {
		txn.Close()
		<-done
		ack.Close()
	}, nil
}

// headUpdate reads the transaction's update of HEAD ("<old> <new> HEAD").
func (s *shimDir) headUpdate() (plumbing.Hash, bool) {
	b, err := os.ReadFile(s.path("updates"))
	if err != nil {
		return plumbing.ZeroHash, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[2] == "HEAD" && plumbing.IsHash(f[1]) {
			return plumbing.NewHash(f[1]), true
		}
	}
	return plumbing.ZeroHash, false
}

// lookSh finds the shell the shims run in.
func lookSh() (string, error) {
	for _, p := range []string{"/bin/sh", "/usr/bin/sh"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("no /bin/sh to run the hooks with")
}
