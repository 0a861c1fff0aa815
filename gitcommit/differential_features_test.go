package gitcommit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/debussy-dev/debussy/internal/text"
)

// Differential cases for what `git commit` does beyond staging: clean
// filters, line endings, ident, hooks, signing and unfinished operations.

// hook installs an executable hook script in the repository's hooks dir
// (or dir, relative to the worktree, for core.hooksPath).
func (h *diffRepo) hook(dir, name, script string) {
	h.t.Helper()
	if dir == "" {
		dir = ".git/hooks"
	}
	p := filepath.Join(dir, name)
	h.Write(p, "#!/bin/sh\n"+script)
	h.Chmod(p, 0o755)
}

const crlfSample = "one\r\ntwo\r\n"

func TestDifferentialFeatures(t *testing.T) {
	lfs, _ := exec.LookPath("git-lfs")
	cases := []diffCase{
		// Clean filters.
		{
			name: "clean filter (git-crypt style rot13) on new and modified files",
			setup: func(t *testing.T, h *diffRepo) {
				h.Git("config", "filter.rot.clean", "tr a-z n-za-m")
				h.Git("config", "filter.rot.smudge", "tr a-z n-za-m")
				h.Write(".gitattributes", "*.secret filter=rot\n")
				h.Write("old.secret", "hello\n")
			},
			change: func(t *testing.T, h *diffRepo) {
				h.Write("old.secret", "changed\n")
				h.Write("new.secret", "password\n")
				h.Write("dir/deep.secret", "deep\n")
				h.Write("plain.txt", "plain\n")
			},
		},
		{
			name: "clean filter gets the quoted path as %f, %% stays %",
			setup: func(t *testing.T, h *diffRepo) {
				h.Git("config", "filter.tag.clean", `sh -c 'cat; printf "%%s|%%%%\n" "$1"' - %f`)
				h.Write(".gitattributes", "*.t filter=tag\n")
			},
			change: func(t *testing.T, h *diffRepo) {
				h.Write("sub dir/it's.t", "x\n")
				h.Write("a.t", "y\n")
			},
		},
		{
			name: "a required clean filter that fails refuses the commit",
			setup: func(t *testing.T, h *diffRepo) {
				h.Git("config", "filter.bad.clean", "false")
				h.Git("config", "filter.bad.required", "true")
				h.Write(".gitattributes", "*.x filter=bad\n")
			},
			change:     func(t *testing.T, h *diffRepo) { h.Write("a.x", "data\n") },
			gitRefuses: "clean filter 'bad' failed",
			refused:    "clean filter 'bad' failed",
		},
		{
			name: "a clean filter that fails, not required: stored unfiltered like git",
			setup: func(t *testing.T, h *diffRepo) {
				h.Git("config", "filter.bad.clean", "exit 3")
				h.Write(".gitattributes", "*.x filter=bad\n")
			},
			change: func(t *testing.T, h *diffRepo) { h.Write("a.x", "data\n") },
		},
		{
			name: "filter attribute naming an unconfigured driver does nothing",
			setup: func(t *testing.T, h *diffRepo) {
				h.Write(".gitattributes", "*.x filter=nosuch\n")
			},
			change: func(t *testing.T, h *diffRepo) { h.Write("a.x", "data\r\n") },
		},
		{
			name: "long-running filter process (pkt-line protocol) takes precedence over clean",
			setup: func(t *testing.T, h *diffRepo) {
				h.Git("config", "filter.up.process", "perl "+text.ShellQuote(filterProcessScript(t)))
				h.Git("config", "filter.up.clean", "cat")
				h.Git("config", "filter.up.required", "true")
				h.Write(".gitattributes", "*.up filter=up\n")
			},
			change: func(t *testing.T, h *diffRepo) {
				h.Write("a.up", "hello\n")
				h.Write("b/c.up", "world\n")
				h.Write("big.up", string(make([]byte, 200000)))
			},
		},

		// Line endings.
		{
			name: "core.autocrlf=true: CRLF text converted; binary, lone CR and mixed handled as git",
			setup: func(t *testing.T, h *diffRepo) {
				h.Write("crlf-in-index.txt", crlfSample) // committed with CRLF before autocrlf
				h.Write("lf.txt", "a\n")
			},
			change: func(t *testing.T, h *diffRepo) {
				h.Git("config", "core.autocrlf", "true")
				h.Write("crlf.txt", crlfSample)
				h.Write("mixed.txt", "a\r\nb\n")
				h.Write("lonecr.txt", "a\rb\r\n")
				h.Write("nul.bin", "a\x00\r\n")
				h.Write("ctrl.txt", "\x01\x02\r\n")
				h.Write("eof.txt", "dos\r\n\x1a")
				h.Write("crlf-in-index.txt", crlfSample+"three\r\n")
				h.Write("lf.txt", "a\r\nb\r\n")
				h.Write("empty.txt", "")
			},
		},
		{
			name: "core.autocrlf=input",
			change: func(t *testing.T, h *diffRepo) {
				h.Git("config", "core.autocrlf", "input")
				h.Write("a.txt", crlfSample)
			},
		},
		{
			name: "text, text=auto, eol=lf, eol=crlf, -text, binary and crlf attributes",
			setup: func(t *testing.T, h *diffRepo) {
				h.Write("auto-crlf-in-index.a", crlfSample)
				h.Write(".gitattributes", "*.t text\n*.a text=auto\n*.lf eol=lf\n*.cr eol=crlf\n*.n -text\n*.b binary\n*.legacy crlf\n*.nolegacy -crlf\n*.input crlf=input\n*.ae text=auto eol=lf\n")
			},
			change: func(t *testing.T, h *diffRepo) {
				for _, ext := range []string{"t", "a", "lf", "cr", "n", "b", "legacy", "nolegacy", "input", "ae"} {
					h.Write("f."+ext, crlfSample)
					h.Write("bin."+ext, "x\x00\r\n")
					h.Write("lone."+ext, "x\ry\r\n")
				}
				h.Write("auto-crlf-in-index.a", crlfSample+"x\r\n")
			},
		},
		{
			name: "attribute precedence: subdirectory, info/attributes, core.attributesFile, macros, unset with !",
			home: map[string]string{".config/git/attributes": "*.g text\n*.m text\n"},
			setup: func(t *testing.T, h *diffRepo) {
				h.Write(".gitattributes", "[attr]mytext text eol=lf\n*.m -text\n*.r mytext\n*.u text\n")
				h.Write("sub/.gitattributes", "*.m text\n*.u !text\n/anch.s text\nnested/*.p text\n")
				h.Write(".git/info/attributes", "*.i text\n")
			},
			change: func(t *testing.T, h *diffRepo) {
				for _, p := range []string{"a.g", "a.m", "sub/a.m", "a.r", "a.u", "sub/a.u", "a.i", "sub/anch.s", "sub/x/anch.s", "sub/nested/a.p", "sub/nested/deeper/a.p"} {
					h.Write(p, crlfSample)
				}
			},
		},
		{
			name: "core.safecrlf=true refuses what git refuses",
			setup: func(t *testing.T, h *diffRepo) {
				h.Git("config", "core.autocrlf", "true")
				h.Git("config", "core.safecrlf", "true")
			},
			change:     func(t *testing.T, h *diffRepo) { h.Write("lf.txt", "a\nb\n") },
			gitRefuses: "LF would be replaced by CRLF",
			refused:    "LF would be replaced by CRLF",
		},
		{
			name:  "ident attribute collapses $Id$",
			setup: func(t *testing.T, h *diffRepo) { h.Write(".gitattributes", "*.c ident\n") },
			change: func(t *testing.T, h *diffRepo) {
				h.Write("a.c", "/* $Id: 1234 $ */\n$Id$\n$Id: across\nlines $\n$Id:x$ $Id\n")
				h.Write("b.txt", "$Id: not ident $\n")
			},
		},
		{
			// Where git is installed its verdict converts such files: a
			// pattern alone is no refusal (round three).
			name:   "a working-tree-encoding pattern is no refusal",
			setup:  func(t *testing.T, h *diffRepo) { h.Write(".gitattributes", "*.u16 working-tree-encoding=UTF-16\n") },
			change: func(t *testing.T, h *diffRepo) { h.Write("a.txt", "x\n") },
		},
		{
			name: "symlinked .gitattributes is not followed",
			setup: func(t *testing.T, h *diffRepo) {
				h.Write("attrs", "*.t text\n")
				h.Symlink("attrs", ".gitattributes")
			},
			change: func(t *testing.T, h *diffRepo) { h.Write("a.t", crlfSample) },
		},

		// Hooks.
		{
			name: "pre-commit rejection",
			setup: func(t *testing.T, h *diffRepo) {
				h.hook("", "pre-commit", "echo 'secret found in a.txt' >&2\nexit 1\n")
			},
			change:  func(t *testing.T, h *diffRepo) { h.Write("a.txt", "AKIA...\n") },
			refused: "pre-commit hook rejected the commit (exit status 1):\nsecret found in a.txt",
		},
		{
			name: "pre-commit sees the staged index and may stage more",
			setup: func(t *testing.T, h *diffRepo) {
				h.hook("", "pre-commit", "test \"$GIT_INDEX_FILE\" = .git/index || exit 9\ngit diff --cached --name-only > staged.list\ngit add staged.list\n")
			},
			change: func(t *testing.T, h *diffRepo) { h.Write("a.txt", "a\n"); h.Write("b/c.txt", "c\n") },
		},
		{
			name: "commit-msg and prepare-commit-msg edit the message",
			setup: func(t *testing.T, h *diffRepo) {
				h.hook("", "prepare-commit-msg", "test \"$2\" = message || exit 8\necho \"prepared ($2)\" >> \"$1\"\n")
				h.hook("", "commit-msg", "printf '\\nChange-Id: I123\\n' >> \"$1\"\n")
			},
			change: func(t *testing.T, h *diffRepo) { h.Write("a.txt", "a\n") },
		},
		{
			name:    "commit-msg rejection",
			setup:   func(t *testing.T, h *diffRepo) { h.hook("", "commit-msg", "echo 'bad message' >&2\nexit 3\n") },
			change:  func(t *testing.T, h *diffRepo) { h.Write("a.txt", "a\n") },
			refused: "commit-msg hook rejected the commit (exit status 3)",
		},
		{
			name: "core.hooksPath relative to the worktree root; the default hooks dir is ignored",
			setup: func(t *testing.T, h *diffRepo) {
				h.hook("", "pre-commit", "exit 1\n")
				h.hook(".githooks", "commit-msg", "echo 'Hooked: yes' >> \"$1\"\n")
				h.Git("config", "core.hooksPath", ".githooks")
			},
			change: func(t *testing.T, h *diffRepo) { h.Write("a.txt", "a\n") },
		},
		{
			name: "a non-executable hook is ignored",
			setup: func(t *testing.T, h *diffRepo) {
				h.hook("", "pre-commit", "exit 1\n")
				h.Chmod(".git/hooks/pre-commit", 0o644)
			},
			change: func(t *testing.T, h *diffRepo) { h.Write("a.txt", "a\n") },
		},
		{
			name: "post-commit runs after the commit; its failure does not matter",
			setup: func(t *testing.T, h *diffRepo) {
				h.hook("", "post-commit", "git rev-parse HEAD > .git/post-commit-saw\nexit 1\n")
			},
			change: func(t *testing.T, h *diffRepo) { h.Write("a.txt", "a\n") },
		},

		{
			name: "i18n.commitEncoding writes the encoding header",
			setup: func(t *testing.T, h *diffRepo) {
				h.Git("config", "i18n.commitEncoding", "ISO-8859-1")
			},
			change: func(t *testing.T, h *diffRepo) { h.Write("a.txt", "a\n") },
		},
		{
			name:   "i18n.commitEncoding utf8 is UTF-8: no header",
			setup:  func(t *testing.T, h *diffRepo) { h.Git("config", "i18n.commitEncoding", "utf8") },
			change: func(t *testing.T, h *diffRepo) { h.Write("a.txt", "a\n") },
		},

		// Signing (ssh signatures carry no timestamp: byte-identical to git's).
		{
			name: "commit.gpgSign with gpg.format=ssh",
			setup: func(t *testing.T, h *diffRepo) {
				key := sshKey(t, h.Home)
				h.Git("config", "gpg.format", "ssh")
				h.Git("config", "user.signingKey", key)
				h.Git("config", "commit.gpgSign", "true")
			},
			change: func(t *testing.T, h *diffRepo) { h.Write("a.txt", "a\n") },
		},
		{
			name: "ssh signing without a key is refused before the first session",
			change: func(t *testing.T, h *diffRepo) {
				h.Write("a.txt", "a\n")
				h.Git("config", "gpg.format", "ssh")
				h.Git("config", "commit.gpgSign", "true")
			},
			refused: "set user.signingKey",
		},
		{
			name: "an unknown gpg.format is refused",
			change: func(t *testing.T, h *diffRepo) {
				h.Write("a.txt", "a\n")
				h.Git("config", "gpg.format", "pgp2")
				h.Git("config", "commit.gpgSign", "true")
			},
			refused: "gpg.format=pgp2",
		},

		// Unfinished operations are refused at the start.
		{
			name:    "mid-merge",
			setup:   conflictSetup,
			change:  func(t *testing.T, h *diffRepo) { h.GitErr("merge", "other") },
			refused: "middle of a merge (MERGE_HEAD exists); finish it with `git merge --continue`",
		},
		{
			name:    "mid-cherry-pick",
			setup:   conflictSetup,
			change:  func(t *testing.T, h *diffRepo) { h.GitErr("cherry-pick", "other") },
			refused: "middle of a cherry-pick",
		},
		{
			name:    "mid-revert",
			setup:   conflictSetup,
			change:  func(t *testing.T, h *diffRepo) { h.Git("revert", "--no-commit", "HEAD") },
			refused: "middle of a revert",
		},
		{
			name:    "mid-rebase",
			setup:   conflictSetup,
			change:  func(t *testing.T, h *diffRepo) { h.GitErr("rebase", "other") },
			refused: "middle of a rebase (rebase-merge exists); finish it with `git rebase --continue`",
		},
		{
			name:    "bisecting",
			setup:   conflictSetup,
			change:  func(t *testing.T, h *diffRepo) { h.Git("bisect", "start") },
			refused: "middle of a bisect",
		},
		{
			name:    "a reference-transaction hook is refused",
			setup:   func(t *testing.T, h *diffRepo) { h.hook("", "reference-transaction", "exit 0\n") },
			change:  func(t *testing.T, h *diffRepo) { h.Write("a.txt", "a\n") },
			refused: "reference-transaction hook",
		},
	}
	if lfs != "" {
		cases = append(cases, diffCase{
			name: "git-lfs (filter.lfs.process)",
			setup: func(t *testing.T, h *diffRepo) {
				h.Git("lfs", "install", "--local")
				h.Write(".gitattributes", "*.bin filter=lfs diff=lfs merge=lfs -text\n")
				h.Write("old.bin", "old binary\x00\n")
			},
			change: func(t *testing.T, h *diffRepo) {
				h.Write("old.bin", "new binary\x00\n")
				h.Write("assets/new.bin", string(make([]byte, 100000)))
			},
		})
	} else if os.Getenv("CI") != "" {
		t.Error("git-lfs not installed: .ci/run installs it, and CI never skips a case")
	} else {
		t.Log("git-lfs not installed: its case is skipped (apt-get install git-lfs)")
	}
	runDiffCases(t, cases)
}

// conflictSetup leaves branch "other" whose one commit conflicts with main's.
func conflictSetup(t *testing.T, h *diffRepo) {
	h.Write("f.txt", "base\n")
	h.Git("add", "-A")
	h.Git("commit", "-q", "-m", "base")
	h.Git("branch", "other")
	h.Write("f.txt", "main\n")
	h.Git("commit", "-q", "-am", "main")
	h.Git("checkout", "-q", "other")
	h.Write("f.txt", "other\n")
	h.Git("commit", "-q", "-am", "other")
	h.Git("checkout", "-q", "main")
}

// sshKey makes (once per HOME) an ed25519 key without a passphrase and
// returns its path.
func sshKey(t *testing.T, home string) string {
	key := filepath.Join(home, "id_ed25519")
	if _, err := os.Stat(key); err == nil {
		return key
	}
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	return key
}

// filterProcessScript writes a long-running filter (git's protocol) that
// upper-cases what it cleans, and returns its path.
func filterProcessScript(t *testing.T) string {
	return filterScript(t, "up.pl", "$c = uc($c);")
}

// filterScript writes a long-running filter (git's protocol) that applies
// the Perl statement transform to $c, the content of each file, and
// announces the capabilities given as its arguments (default: clean).
func filterScript(t *testing.T, name, transform string) string {
	p := filepath.Join(t.TempDir(), name)
	must(t, os.WriteFile(p, []byte(`use strict;
binmode STDIN; binmode STDOUT; $| = 1;
sub rd { my $h; my $n = read(STDIN, $h, 4); return undef unless $n == 4; my $l = hex($h); return "" if $l == 0; my $d; read(STDIN, $d, $l - 4); return $d; }
sub wr { my $d = shift; printf "%04x%s", length($d) + 4, $d; }
sub fl { print "0000"; }
while (defined(my $l = rd())) { last if $l eq ""; }
wr("git-filter-server\n"); wr("version=2\n"); fl();
while (defined(my $l = rd())) { last if $l eq ""; }
wr("capability=$_\n") for (@ARGV ? @ARGV : ("clean")); fl();
while (1) {
  my %h;
  while (defined(my $l = rd())) { last if $l eq ""; chomp $l; my ($k, $v) = split /=/, $l, 2; $h{$k} = $v; }
  last unless %h;
  my $c = "";
  while (defined(my $d = rd())) { last if $d eq ""; $c .= $d; }
  `+transform+`
  wr("status=success\n"); fl();
  while (length $c) { wr(substr($c, 0, 65516, "")); }
  fl(); fl();
}
`), 0o644))
	return p
}
