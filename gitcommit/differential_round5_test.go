package gitcommit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Round five (issue 55): where debussy did git's work itself. Each case
// differed from `git add -A && git commit` (or made a commit git refuses)
// before git commit made the commit.

var round5Cases = []diffCase{
	// Hooks as git commit runs them.
	{
		name:  "with nothing to commit, pre-commit still runs and may stage a file",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.hook("", "pre-commit", "date > /dev/null; echo generated > gen.txt; git add gen.txt\n")
		},
	},
	{
		name:  "a pre-commit that unstages everything",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.hook("", "pre-commit", "git reset -q\n")
			h.Write("keep.txt", "changed\n")
		},
	},
	{
		name:  "post-index-change runs as often as under git add -A && git commit",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.hook("", "post-index-change", "echo \"$1 $2 ${GIT_INDEX_FILE-none}\" >> \"$(git rev-parse --git-dir)/post-index-change.log\"\n")
			h.Write("keep.txt", "changed\n")
		},
		check: func(t *testing.T, d, g *diffRepo) {
			got, _ := os.ReadFile(d.path(".git/post-index-change.log"))
			want, _ := os.ReadFile(g.path(".git/post-index-change.log"))
			if string(got) != string(want) {
				t.Errorf("post-index-change ran:\n--- debussy\n%s--- git\n%s", got, want)
			}
		},
	},
	{
		name:  "a hook's background child keeps its stdout open",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.hook("", "pre-commit", "sleep 3 &\necho started\n")
			h.Write("keep.txt", "changed\n")
		},
	},
	{
		name:  "a pre-commit that switches branch commits on the new one",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.hook("", "pre-commit", "git checkout -q -b switched\n")
			h.Write("keep.txt", "changed\n")
		},
		check: func(t *testing.T, d, g *diffRepo) {
			for _, args := range [][]string{{"symbolic-ref", "HEAD"}, {"rev-parse", "main", "switched"}} {
				got, _ := d.GitErr(args...)
				want, _ := g.GitErr(args...)
				if got != want {
					t.Errorf("%v:\n--- debussy\n%s\n--- git\n%s", args, got, want)
				}
			}
		},
	},

	// The commit object and the reflog.
	{
		name:   "a message with an invalid UTF-8 byte is re-encoded",
		setup:  diffBase,
		change: func(t *testing.T, h *diffRepo) { h.Write("keep.txt", "changed\n") },
		msg:    "caf\xe9 \xff\xfe done\n\nbody \xc3\x28\n",
	},
	{
		name:  "a NUL byte a commit-msg hook writes is refused",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.hook("", "commit-msg", "printf 'sub\\000ject\\n' > \"$1\"\n")
			h.Write("keep.txt", "changed\n")
		},
		gitRefuses: "NUL byte",
		refused:    "NUL byte",
	},
	{
		name:   "whitespace runs in the subject, in the reflog",
		setup:  diffBase,
		change: func(t *testing.T, h *diffRepo) { h.Write("keep.txt", "changed\n") },
		msg:    "  spaced \t  out   subject \r\n\nbody\n",
		check:  compareReflogs,
	},
	{
		name:   "GIT_REFLOG_ACTION names the reflog's action",
		setup:  diffBase,
		env:    map[string]string{"GIT_REFLOG_ACTION": "debussy-test"},
		change: func(t *testing.T, h *diffRepo) { h.Write("keep.txt", "changed\n") },
		check:  compareReflogs,
	},
	{
		name:      "gpg.ssh.defaultKeyCommand with quoted arguments",
		setup:     diffBase,
		commitEnv: func(h *diffRepo) map[string]string { return map[string]string{"SSH_AUTH_SOCK": sshAgent(h.t, h.Home)} },
		change: func(t *testing.T, h *diffRepo) {
			key := sshKey(t, h.Home)
			sshAgent(t, h.Home)
			h.Git("config", "gpg.format", "ssh")
			h.Git("config", "gpg.ssh.defaultKeyCommand", "sh -c 'echo \"key::$(cat \"$0\")\"' "+key+".pub")
			h.Git("config", "commit.gpgSign", "true")
			h.Write("keep.txt", "changed\n")
		},
	},
	{
		name: "a clean filter sees the environment git add gives it",
		setup: func(t *testing.T, h *diffRepo) {
			diffBase(t, h)
			h.Git("config", "filter.env.clean", `sh -c 'cat; echo "dir=${GIT_DIR-unset} tree=${GIT_WORK_TREE-unset} index=${GIT_INDEX_FILE-unset} pathspecs=${GIT_LITERAL_PATHSPECS-unset}"'`)
			h.Write(".gitattributes", "*.env filter=env\n")
		},
		change: func(t *testing.T, h *diffRepo) { h.Write("a.env", "x\n") },
		check: func(t *testing.T, d, g *diffRepo) {
			if !d.sameCommit {
				t.Logf("debussy's a.env: %s", d.Git("show", "HEAD:a.env"))
				t.Logf("git's a.env: %s", g.Git("show", "HEAD:a.env"))
			}
		},
	},
	{
		name: "a .gitattributes in HEAD, new names fsck looks at twice",
		setup: func(t *testing.T, h *diffRepo) {
			diffBase(t, h)
			h.Write(".gitattributes", "*.txt diff\n")
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Write("digits.txt", "d\n")
			h.Write("sub/gitlike/é.txt", "e\n")
		},
	},
	{
		name: "edits to a tracked .debussy/config.yaml",
		setup: func(t *testing.T, h *diffRepo) {
			diffBase(t, h)
			h.Write(".debussy/config.yaml", "model: a\n")
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Write(".debussy/config.yaml", "model: b\n")
			h.Write("keep.txt", "changed\n")
		},
	},

	// Pathspecs the user's shell turns on.
	{
		name:   "GIT_LITERAL_PATHSPECS in the environment",
		setup:  diffBase,
		env:    map[string]string{"GIT_LITERAL_PATHSPECS": "1"},
		change: func(t *testing.T, h *diffRepo) { h.Write("keep.txt", "changed\n"); h.Write(":(glob)x", "x\n") },
	},
	{
		name:   "GIT_GLOB_PATHSPECS in the environment",
		setup:  diffBase,
		env:    map[string]string{"GIT_GLOB_PATHSPECS": "1"},
		change: func(t *testing.T, h *diffRepo) { h.Write("keep.txt", "changed\n"); h.Write("sub/*.txt", "x\n") },
	},
	{
		name:   "GIT_ICASE_PATHSPECS in the environment",
		setup:  diffBase,
		env:    map[string]string{"GIT_ICASE_PATHSPECS": "1"},
		change: func(t *testing.T, h *diffRepo) { h.Write("keep.txt", "changed\n"); h.Write("KEEP.TXT", "x\n") },
	},
}

func TestDifferentialRound5(t *testing.T) {
	runDiffCases(t, round5Cases)
}

// The user's files (untracked when the run started) stay out of the
// commit whatever the agent does with them, and whatever they are named;
// the index keeps what it had for them, and shows the rest as committed.
func TestUserFilesStayOut(t *testing.T) {
	user := map[string]string{"notes.txt": "mine\n", "dir/todo.md": "todo\n", ":!b": "b\n", ":/c": "c\n", ":(glob)**": "g\n", "sub/:(top)d": "d\n"}
	cases := []struct {
		name  string
		env   []string
		agent func(t *testing.T, dir string)
		// out are more paths that must not be committed (the user's are
		// checked always); in are paths that must be.
		out, in []string
	}{
		{name: "the agent runs git add -A", agent: func(t *testing.T, dir string) { runGit(t, dir, "add", "-A") }},
		{name: "the agent adds one user file", agent: func(t *testing.T, dir string) { runGit(t, dir, "add", "notes.txt") }},
		{name: "the agent adds one with intent to add", agent: func(t *testing.T, dir string) { runGit(t, dir, "add", "-N", "notes.txt") }},
		{name: "the agent adds one, then deletes it", agent: func(t *testing.T, dir string) {
			runGit(t, dir, "add", "notes.txt")
			must(t, os.Remove(filepath.Join(dir, "notes.txt")))
		}},
		{name: "the agent renames one", agent: func(t *testing.T, dir string) {
			must(t, os.Rename(filepath.Join(dir, "notes.txt"), filepath.Join(dir, "renamed.txt")))
			runGit(t, dir, "add", "-A")
		}, out: []string{"renamed.txt"}},
		{name: "GIT_LITERAL_PATHSPECS", env: []string{"GIT_LITERAL_PATHSPECS=1"}, agent: func(t *testing.T, dir string) {}},
		{name: "GIT_GLOB_PATHSPECS", env: []string{"GIT_GLOB_PATHSPECS=1"}, agent: func(t *testing.T, dir string) {}},
		{name: "GIT_ICASE_PATHSPECS", env: []string{"GIT_ICASE_PATHSPECS=1"}, agent: func(t *testing.T, dir string) {}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := isolate(t)
			dir := committedRepo(t, map[string]string{"base.txt": "base\n"})
			writeFiles(t, dir, user)
			env := append(diffEnv(home, nil), tc.env...)
			r := mustOpen(t, dir, WithEnv(env))
			files, err := r.Untracked(t.Context())
			if err != nil || len(files) != len(user) {
				t.Fatalf("Untracked = %v, %v", files, err)
			}
			writeFiles(t, dir, map[string]string{"work.go": "package work\n"})
			tc.agent(t, dir)
			before := runGit(t, dir, "ls-files", "-s", "-z", "--")
			c, err := r.CommitAll(t.Context(), "work", Exclude(files, nil))
			if err != nil {
				t.Fatalf("CommitAll: %v", err)
			}
			tree := treeFiles(t, dir)
			for _, p := range append(tc.out, keys(user)...) {
				for _, f := range tree {
					if f == p {
						t.Errorf("%q committed: %v", p, tree)
					}
				}
			}
			for _, p := range append(tc.in, "work.go", "base.txt") {
				if !contains(tree, p) {
					t.Errorf("%q not committed: %v", p, tree)
				}
			}
			if c.Hash != runGit(t, dir, "rev-parse", "HEAD") {
				t.Errorf("Commit.Hash %s is not HEAD", c.Hash)
			}
			// The index: HEAD's for every committed path (nothing shows as
			// staged against the commit), the user's paths as they were.
			staged := strings.Fields(runGit(t, dir, "diff", "--cached", "--name-only", "--no-renames", "HEAD"))
			for _, p := range staged {
				if _, ok := user[p]; !ok {
					t.Errorf("%q staged against the new commit", p)
				}
			}
			for p := range user {
				if got, want := entriesFor(runGit(t, dir, "ls-files", "-s", "-z", "--"), p), entriesFor(before, p); got != want {
					t.Errorf("index entry of %q: %q, before the commit %q", p, got, want)
				}
			}
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// entriesFor picks path's records out of `ls-files -s -z`.
func entriesFor(lsFiles, path string) string {
	var out []string
	for _, rec := range strings.Split(lsFiles, "\x00") {
		if _, p, ok := strings.Cut(rec, "\t"); ok && p == path {
			out = append(out, rec)
		}
	}
	return strings.Join(out, "|")
}

// sshAgent starts (once per home) an ssh-agent holding home's key, for
// signing with a literal key as gpg.ssh.defaultKeyCommand gives one, and
// returns its socket. The socket is in a short directory of its own, not
// in home: a Unix socket's path holds at most 107 bytes, and t.TempDir's
// (the test's name under TMPDIR) passed that under make test's tmpfs.
func sshAgent(t *testing.T, home string) string {
	link := filepath.Join(home, "agent.sock")
	if sock, err := os.Readlink(link); err == nil {
		return sock
	}
	if _, err := exec.LookPath("ssh-agent"); err != nil {
		t.Skip("ssh-agent not installed")
	}
	dir, err := os.MkdirTemp("", "ssh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "a")
	if err := os.Symlink(sock, link); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ssh-agent", "-a", sock).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-agent: %v\n%s", err, out)
	}
	if _, pid, ok := strings.Cut(string(out), "SSH_AGENT_PID="); ok {
		pid, _, _ = strings.Cut(pid, ";")
		t.Cleanup(func() { _ = exec.Command("kill", pid).Run() })
	}
	add := exec.Command("ssh-add", "-q", sshKey(t, home))
	add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("ssh-add: %v\n%s", err, out)
	}
	return sock
}

// Without git, go-git commits only where its answer is git's: every case
// where go-git staged otherwise (issue 55 found 20 of 33) is refused,
// naming the feature and "install git"; the everyday ones still commit
// exactly as git would.
func TestGitlessCommitsOnlyWhereItEqualsGit(t *testing.T) {
	refused := func(tc diffCase) diffCase {
		tc.refused = "install git"
		return tc
	}
	cases := []diffCase{
		// Where go-git's answer is git's.
		everydayCases[0], // new, modified and deleted files
		everydayCases[1], // first commit on an unborn branch
		everydayCases[2], // nothing to commit
		everydayCases[3], // rename and move between directories
		everydayCases[4], // modes and symlinks
		{name: "plain ignore patterns", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			h.Write(".gitignore", "*.log\nbuild/\n/root-only.txt\n")
			h.Write("a.log", "x")
			h.Write("build/out.bin", "x")
			h.Write("root-only.txt", "x")
			h.Write("app/root-only.txt", "x")
			h.Write("new.txt", "n")
		}},
		{name: "attributes that do not change what is stored", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			h.Write(".gitattributes", "*.go diff=golang linguist-language=Go\n")
			h.Write("x.go", "package x\n")
		}},

		// Where it was not.
		refused(diffCase{name: ".git/info/exclude", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			h.Write(".git/info/exclude", "*.secret\n")
			h.Write("a.secret", "s")
		}}),
		refused(diffCase{name: "core.excludesFile", setup: diffBase, home: map[string]string{"ignores": "*.secret\n",
			".gitconfig": defaultDiffGitconfig + "[core]\n\texcludesFile = ~/ignores\n"},
			change: func(t *testing.T, h *diffRepo) { h.Write("a.secret", "s") }}),
		refused(diffCase{name: "the XDG ignore file", setup: diffBase, home: map[string]string{".config/git/ignore": "*.secret\n"},
			change: func(t *testing.T, h *diffRepo) { h.Write("a.secret", "s") }}),
		refused(diffCase{name: "a negation", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			h.Write(".gitignore", "*.log\n!keep.log\n")
			h.Write("keep.log", "k")
		}}),
		refused(diffCase{name: "a ** pattern", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			h.Write(".gitignore", "src/**/\n")
			h.Write("src/x/y.go", "x")
		}}),
		refused(diffCase{name: "a character class", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			h.Write(".gitignore", "ab[!c]\n")
			h.Write("abd", "x")
		}}),
		refused(diffCase{name: "text attributes (eol)", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			h.Write(".gitattributes", "*.txt text eol=lf\n")
			h.Write("crlf.txt", crlfSample)
		}}),
		refused(diffCase{name: "core.autocrlf", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.autocrlf", "input")
			h.Write("crlf.txt", crlfSample)
		}}),
		refused(diffCase{name: "a clean filter", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "filter.rot.clean", "tr a-z n-za-m")
			h.Write(".gitattributes", "*.secret filter=rot\n")
			h.Write("new.secret", "password\n")
		}}),
		refused(diffCase{name: "core.fileMode=false", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.fileMode", "false")
			h.Chmod("tool.sh", 0o644)
		}}),
		refused(diffCase{name: "core.symlinks=false", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.symlinks", "false")
			h.Write("new.txt", "n")
		}}),
		refused(diffCase{name: "core.ignorecase and a rename by case", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.ignorecase", "true")
			h.Rename("keep.txt", "KEEP.txt")
		}}),
		refused(diffCase{name: "an assume-unchanged entry", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			h.Git("update-index", "--assume-unchanged", "keep.txt")
			h.Write("keep.txt", "local\n")
		}}),
		refused(diffCase{name: "a submodule moved to a new commit", setup: func(t *testing.T, h *diffRepo) {
			diffBase(t, h)
			commitNested(h, "mod", map[string]string{"m.go": "package m\n"})
		}, change: func(t *testing.T, h *diffRepo) {
			h.Write("mod/m.go", "package m // v2\n")
			h.GitIn("mod", "commit", "-q", "-am", "v2")
		}}),
		refused(diffCase{name: "a new nested repository", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			commitNested(h, "vendor/lib", map[string]string{"lib.go": "package lib\n"})
		}}),
		refused(diffCase{name: "a pre-commit hook", setup: diffBase, change: func(t *testing.T, h *diffRepo) {
			h.hook("", "pre-commit", "exit 0\n")
			h.Write("new.txt", "n")
		}}),
		{name: "an invalid path", setup: diffBase, change: func(t *testing.T, h *diffRepo) { h.Write(".Git/config", "x") },
			gitRefuses: "invalid path", refused: "invalid path"},
	}
	for i := range cases {
		cases[i].opts = append(cases[i].opts, withoutGit())
	}
	runDiffCases(t, cases)
}

// The second commit of a run: what the agent staged since the first
// (which noted the index it left) is seen, however it was staged.
func TestUserFilesStayOutAcrossCommits(t *testing.T) {
	for _, stage := range [][]string{{"add", "notes.txt"}, {"add", "-A"}, {"update-index", "--add", "notes.txt"}} {
		t.Run(strings.Join(stage, " "), func(t *testing.T) {
			isolate(t)
			dir := committedRepo(t, map[string]string{"base.txt": "base\n"})
			writeFiles(t, dir, map[string]string{"notes.txt": "mine\n"})
			r := mustOpen(t, dir)
			files, err := r.Untracked(t.Context())
			must(t, err)
			writeFiles(t, dir, map[string]string{"a.txt": "a\n"})
			if _, err := r.CommitAll(t.Context(), "one", Exclude(files, nil)); err != nil {
				t.Fatal(err)
			}
			writeFiles(t, dir, map[string]string{"b.txt": "b\n"})
			runGit(t, dir, stage...)
			if _, err := r.CommitAll(t.Context(), "two", Exclude(files, nil)); err != nil {
				t.Fatal(err)
			}
			if tree := treeFiles(t, dir); contains(tree, "notes.txt") || !contains(tree, "b.txt") {
				t.Errorf("HEAD holds %v", tree)
			}
			if st := runGit(t, dir, "status", "--porcelain"); st != "A  notes.txt" {
				t.Errorf("status = %q, want the agent's staging of notes.txt kept", st)
			}
		})
	}
}
