package gitcommit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// isolate points HOME and XDG_CONFIG_HOME at empty temp dirs and hides the
// system config, so neither git nor the code under test reads the real
// user's configuration. It returns the fake HOME.
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
		"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	return home
}

// runGit runs git in dir and returns its trimmed stdout; any failure fails
// the test.
func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitOutput(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"-c", "core.quotePath=false"}, args...)...)
	cmd.Dir = dir
	return cmd
}

func gitOutput(dir string, args ...string) (string, error) {
	cmd := gitCmd(dir, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", errors.Join(err, errors.New(stderr.String()))
	}
	return strings.TrimRight(stdout.String(), "\n"), nil
}

// newRepo creates an empty repository on branch main with a local identity.
func newRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	runGit(t, t.TempDir(), "init", "-q", "-b", "main", dir)
	runGit(t, dir, "config", "user.name", "Test User")
	runGit(t, dir, "config", "user.email", "test@example.com")
	return dir
}

// committedRepo is newRepo with files committed by git ("init").
func committedRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := newRepo(t)
	writeFiles(t, dir, files)
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "init")
	return dir
}

// writeFiles writes name → content under dir, creating directories.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustOpen(t *testing.T, dir string, opts ...Option) *Repo {
	t.Helper()
	r, err := Open(dir, opts...)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return r
}

// openRun opens dir as a run does: the Repo, and the user's untracked
// files as the run starts.
func openRun(t *testing.T, dir string) (*Repo, Fingerprints) {
	t.Helper()
	r := mustOpen(t, dir)
	files, err := r.Untracked(context.Background())
	if err != nil {
		t.Fatalf("Untracked: %v", err)
	}
	return r, files
}

func mustCommitAll(t *testing.T, dir, msg string) Commit {
	t.Helper()
	c, err := mustOpen(t, dir).CommitAll(context.Background(), msg)
	if err != nil {
		t.Fatalf("CommitAll: %v", err)
	}
	return c
}

// copyTree copies a repository (worktree and .git) with cp -a, so modes,
// symlinks and timestamps survive.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	return dst
}

// commitBothWays commits dir with CommitAll and an identical copy with
// `git add -A && git commit`, and checks that both commits hold the same
// tree, that CommitAll left `git status` clean, that its reported file count
// and Changes match `git diff --name-status`. It returns the commit.
func commitBothWays(t *testing.T, dir string) Commit {
	t.Helper()
	twin := copyTree(t, dir)
	runGit(t, twin, "add", "-A")
	runGit(t, twin, "commit", "-q", "--no-verify", "-m", "git")

	r := mustOpen(t, dir)
	c, err := r.CommitAll(context.Background(), "debussy")
	if err != nil {
		t.Fatalf("CommitAll: %v", err)
	}
	if got, want := runGit(t, dir, "rev-parse", "HEAD^{tree}"), runGit(t, twin, "rev-parse", "HEAD^{tree}"); got != want {
		t.Errorf("tree differs from git's:\n debussy: %s\n%s\n git: %s\n%s", got,
			runGit(t, dir, "ls-tree", "-r", "HEAD"), want, runGit(t, twin, "ls-tree", "-r", "HEAD"))
	}
	// Clean, apart from what git leaves too (content of nested repositories).
	if st, want := runGit(t, dir, "status", "--porcelain"), runGit(t, twin, "status", "--porcelain"); st != want {
		t.Errorf("git status after CommitAll:\n%s\nafter git commit:\n%s", st, want)
	}
	if head := runGit(t, dir, "rev-parse", "HEAD"); head != c.Hash {
		t.Errorf("HEAD = %s, CommitAll returned %s", head, c.Hash)
	}

	var base, gitDiff string
	if parent, err := gitOutput(dir, "rev-parse", "-q", "--verify", "HEAD~1"); err == nil {
		base = parent
		gitDiff = runGit(t, dir, "diff", "--no-renames", "--name-status", "HEAD~1", "HEAD")
	} else {
		gitDiff = runGit(t, dir, "diff", "--no-renames", "--name-status", runGit(t, dir, "hash-object", "-t", "tree", "/dev/null"), "HEAD")
	}
	changes, err := r.Changes(base)
	if err != nil {
		t.Fatalf("Changes: %v", err)
	}
	if got, want := formatChanges(changes), normalizeNameStatus(gitDiff); got != want {
		t.Errorf("Changes(%q):\n%s\nwant (git diff --name-status):\n%s", base, got, want)
	}
	if c.Files != len(changes) {
		t.Errorf("Commit.Files = %d, want %d", c.Files, len(changes))
	}
	return c
}

func formatChanges(cs []Change) string {
	var lines []string
	for _, c := range cs {
		lines = append(lines, c.Status+"\t"+c.Path)
	}
	return strings.Join(lines, "\n")
}

// normalizeNameStatus maps git's T (type change) to M and sorts by path, the
// contract of Changes.
func normalizeNameStatus(s string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "T\t") {
			lines[i] = "M" + l[1:]
		}
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[2:], b[2:]) })
	return strings.Join(lines, "\n")
}

// treeFiles lists the paths in HEAD's tree.
func treeFiles(t *testing.T, dir string) []string {
	t.Helper()
	out := runGit(t, dir, "ls-tree", "-r", "--name-only", "HEAD")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// streamThreshold is the size the port once streamed files above: the
// large-file cases keep their sizes.
const streamThreshold = 1 << 20

// passwdName is the name git takes from the user's passwd entry when
// user.name is set nowhere (ident.c copy_gecos): the gecos field up to its
// first comma, "&" standing for the login name capitalised.
var passwdName = sync.OnceValue(func() string {
	u, err := user.Current()
	if err != nil {
		return ""
	}
	gecos, _, _ := strings.Cut(u.Name, ",")
	if strings.Contains(gecos, "&") && u.Username != "" {
		gecos = strings.ReplaceAll(gecos, "&", strings.ToUpper(u.Username[:1])+u.Username[1:])
	}
	return strings.TrimSpace(gecos)
})

// defaultEmail is the address git makes up when none is set (ident.c
// add_domainname): the login name at the host name, when that name has a
// domain; "" where git would find none and refuse (its getaddrinfo lookup
// of a short name is left out).
var defaultEmail = sync.OnceValue(func() string {
	u, err := user.Current()
	host, herr := os.Hostname()
	if err != nil || herr != nil || u.Username == "" || !strings.Contains(host, ".") {
		return ""
	}
	return u.Username + "@" + host
})
