package gitcommit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A refusing pre-commit hook: a *HookError with the hook's output and exit
// status, nothing committed, the work in the tree and staged (as `git add
// -A` leaves it), and the next commit after the hook is fixed takes it all.
func TestPreCommitRejectionKeepsWork(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{"a.txt": "a\n"})
	mustCommitAll(t, dir, "base")
	head := runGit(t, dir, "rev-parse", "HEAD")

	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	must(t, os.MkdirAll(filepath.Dir(hook), 0o755))
	must(t, os.WriteFile(hook, []byte("#!/bin/sh\necho \"found a secret in $(git diff --cached --name-only)\"\nexit 7\n"), 0o755))
	writeFiles(t, dir, map[string]string{"a.txt": "changed\n", "new.txt": "AKIA\n"})

	_, err := mustOpen(t, dir).CommitAll(context.Background(), "checkpoint")
	var he *HookError
	if !errors.As(err, &he) || !errors.Is(err, ErrHookRejected) {
		t.Fatalf("CommitAll = %v, want a *HookError wrapping ErrHookRejected", err)
	}
	if he.Hook != "pre-commit" || he.ExitCode != 7 || he.Output != "found a secret in a.txt\nnew.txt\n" || he.Path != hook {
		t.Errorf("HookError = %+v", he)
	}
	if got := runGit(t, dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
	if got := runGit(t, dir, "status", "--porcelain"); got != "M  a.txt\nA  new.txt" {
		t.Errorf("status after the rejection:\n%s", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new.txt")); string(b) != "AKIA\n" {
		t.Errorf("new.txt = %q", b)
	}

	must(t, os.Remove(hook))
	c := mustCommitAll(t, dir, "after the fix")
	if c.Files != 2 {
		t.Errorf("the next commit has %d files, want 2", c.Files)
	}
}

func TestHeadTailBoundsOutput(t *testing.T) {
	cases := []struct {
		name   string
		writes []string
		want   string
	}{
		{"fits", []string{"abc", "def"}, "abcdef"},
		{"exactly", []string{"abcdefgh"}, "abcdefgh"},
		{"keeps head and tail", []string{"0123", "456789", "xyz"}, "0123\n[… 5 bytes of output left out …]\n9xyz"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &headTail{max: 8}
			for _, w := range tc.writes {
				if n, err := h.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := h.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// commit.gpgSign with openpgp: `git verify-commit` accepts the signature,
// and the signed commit carries it in a gpgsig header like git's.
func TestSignOpenPGP(t *testing.T) {
	if _, err := exec.LookPath("gpg"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("gpg not installed: CI never skips the signing test")
		}
		t.Skip("gpg not installed")
	}
	isolate(t)
	gnupg, err := os.MkdirTemp("", "gpg") // short: gpg-agent's socket path is limited
	must(t, err)
	t.Cleanup(func() {
		_ = exec.Command("gpgconf", "--homedir", gnupg, "--kill", "all").Run()
		os.RemoveAll(gnupg)
	})
	gen := exec.Command("gpg", "--homedir", gnupg, "--batch", "--pinentry-mode", "loopback", "--passphrase", "",
		"--quick-gen-key", "Test User <test@example.com>", "ed25519", "sign", "never")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("gpg --quick-gen-key: %v\n%s", err, out)
	}
	// git and CommitAll both find the throw-away keyring through gpg.program.
	wrapper := filepath.Join(gnupg, "gpg.sh")
	must(t, os.WriteFile(wrapper, []byte("#!/bin/sh\nexec gpg --homedir '"+gnupg+"' \"$@\"\n"), 0o755))

	dir := newRepo(t)
	runGit(t, dir, "config", "gpg.program", wrapper)
	runGit(t, dir, "config", "commit.gpgSign", "true")
	writeFiles(t, dir, map[string]string{"a.txt": "a\n"})
	mustCommitAll(t, dir, "signed")
	if out, err := gitOutput(dir, "verify-commit", "HEAD"); err != nil {
		t.Fatalf("git verify-commit: %v\n%s", err, out)
	}
	raw := runGit(t, dir, "cat-file", "commit", "HEAD")
	if !strings.Contains(raw, "\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n") || !strings.Contains(raw, "\n -----END PGP SIGNATURE-----\n\nsigned") {
		t.Errorf("commit object:\n%s", raw)
	}

	// A signing failure is an error, not an unsigned commit.
	runGit(t, dir, "config", "user.signingKey", "nobody@nowhere")
	writeFiles(t, dir, map[string]string{"a.txt": "b\n"})
	if _, err := mustOpen(t, dir).CommitAll(context.Background(), "unsigned?"); err == nil || !strings.Contains(err.Error(), "sign commit") {
		t.Errorf("CommitAll with an unknown key = %v, want a signing error", err)
	}
}

// Mid-merge and mid-cherry-pick (past Preflight, e.g. the agent ran git
// merge), CommitAll commits as `git add -A && git commit` does: a merge
// commit, or the picked commit's author, and the operation's state cleared.
func TestCommitDuringOperation(t *testing.T) {
	cases := []struct {
		name   string
		start  []string
		marker string
	}{
		{"merge", []string{"merge", "other"}, "MERGE_HEAD"},
		{"cherry-pick", []string{"cherry-pick", "other"}, "CHERRY_PICK_HEAD"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			dir := newRepo(t)
			writeFiles(t, dir, map[string]string{"f.txt": "base\n"})
			runGit(t, dir, "add", "-A")
			runGit(t, dir, "commit", "-q", "-m", "base")
			runGit(t, dir, "checkout", "-q", "-b", "other")
			writeFiles(t, dir, map[string]string{"f.txt": "other\n"})
			// An old author date: a cherry-pick keeps it, a merge does not,
			// and neither comparison may hang on the clock's second.
			t.Setenv("GIT_AUTHOR_DATE", "2001-02-03T04:05:06Z")
			runGit(t, dir, "-c", "user.name=Picked Author", "-c", "user.email=picked@example.com", "commit", "-q", "-am", "other")
			os.Unsetenv("GIT_AUTHOR_DATE")
			runGit(t, dir, "checkout", "-q", "main")
			writeFiles(t, dir, map[string]string{"f.txt": "main\n"})
			runGit(t, dir, "commit", "-q", "-am", "main")
			if _, err := gitOutput(dir, tc.start...); err == nil {
				t.Fatal("expected a conflict")
			}
			writeFiles(t, dir, map[string]string{"f.txt": "resolved\n"})
			twin := copyTree(t, dir)
			runGit(t, twin, "add", "-A")
			runGit(t, twin, "commit", "-q", "-m", "resolved")

			r := mustOpen(t, dir)
			var ip *InProgressError
			if err := r.Preflight(); !errors.As(err, &ip) || ip.Marker != tc.marker {
				t.Errorf("Preflight = %v, want an InProgressError for %s", err, tc.marker)
			}
			if _, err := r.CommitAll(context.Background(), "resolved"); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"HEAD^{tree}", "HEAD^@"} {
				if got, want := runGit(t, dir, "rev-parse", q), runGit(t, twin, "rev-parse", q); got != want {
					t.Errorf("rev-parse %s = %s, git: %s", q, got, want)
				}
			}
			// A merge's author date is now: git's twin commit was made a
			// moment earlier, so only a picked commit's date can be equal.
			format := "--format=%an <%ae>"
			if tc.marker == "CHERRY_PICK_HEAD" {
				format += " %ad"
			}
			if got, want := runGit(t, dir, "log", "-1", format), runGit(t, twin, "log", "-1", format); got != want {
				t.Errorf("author = %s, git: %s", got, want)
			}
			// Without "# branch.oid": the commit ids differ whenever the two
			// commits' dates fall in different seconds (tree and parents are
			// compared above).
			status := func(dir string) string {
				lines := strings.Split(runGit(t, dir, "status", "--porcelain=v2", "--branch"), "\n")
				return strings.Join(slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "# branch.oid ") }), "\n")
			}
			if got, want := status(dir), status(twin); got != want {
				t.Errorf("status:\n%s\ngit:\n%s", got, want)
			}
			// The reflog says "commit (merge):" for a merge, as git's does.
			if got, want := runGit(t, dir, "reflog", "-1", "--format=%gs"), runGit(t, twin, "reflog", "-1", "--format=%gs"); got != want {
				t.Errorf("reflog = %q, git: %q", got, want)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", tc.marker)); err == nil {
				t.Errorf("%s left behind", tc.marker)
			}
			if err := r.Preflight(); err != nil {
				t.Errorf("Preflight after the commit: %v", err)
			}
		})
	}
}
