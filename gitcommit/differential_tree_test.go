package gitcommit

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// Round three (issue 19): names, modes, symlinks, special files, renames,
// deletions and nested repositories, batched in one repository pair.

func writeAll(h *diffRepo, files ...string) {
	for _, f := range files {
		h.Write(f, "x\n")
	}
}

var treeBatch = diffBatch{
	name: "names, modes, symlinks, renames",
	cases: []batchCase{
		// Names git accepts although they look reserved.
		{name: "names close to .git that git accepts", change: func(t *testing.T, h *diffRepo) {
			writeAll(h, ".gitx", ".git-blame-ignore-revs", "x.git", ".git~", "git~2", "git~10", ".gitfoo/a", "a.git/b", "git", "GIT")
		}},
		{name: ".gitmodules forms as regular files are accepted", change: func(t *testing.T, h *diffRepo) {
			writeAll(h, ".gitmodules", "sub/.gitmodules", ".GITMODULES", "gitmod~1", "GI7EBA~1", ".gitmodules::$DATA")
		}},
		{name: "symlinked .gitattributes, .gitignore and .mailmap are accepted", change: func(t *testing.T, h *diffRepo) {
			h.Write("target", "*.x\n")
			h.Symlink("target", ".gitattributes")
			h.Symlink("target", ".mailmap")
			h.Symlink("target", "sub/.gitignore")
		}},
		{name: "names git quotes or finds odd", change: func(t *testing.T, h *diffRepo) {
			writeAll(h, "new\nline", "back\\slash", "-dash", "~tilde", " lead", "trail ", "trail.", "semi;colon", "star*", "q?", "[br]", "a\x01ctl", "del\x7f", "\xff\xfe-not-utf8", "CON", "aux.txt", "nul")
		}},
		{name: "a 255-byte name and a deep path", change: func(t *testing.T, h *diffRepo) {
			h.Write(strings.Repeat("n", 255), "x")
			h.Write(strings.Repeat("d/", 60)+"leaf", "x")
		}},
		{name: "NFC and NFD spellings are two files", change: func(t *testing.T, h *diffRepo) {
			writeAll(h, "caf\u00e9.txt", "cafe\u0301.txt", "\u00c5ngstr\u00f6m/x", "A\u030angstro\u0308m/x")
		}},
		{name: "a file renamed to NFD", setup: func(t *testing.T, h *diffRepo) { h.Write("caf\u00e9.txt", "x\n") },
			change: func(t *testing.T, h *diffRepo) { h.Rename("caf\u00e9.txt", "cafe\u0301.txt") }},

		// Modes.
		{name: "only the owner's execute bit counts", change: func(t *testing.T, h *diffRepo) {
			for name, mode := range map[string]os.FileMode{"u+x": 0o744, "g+x": 0o654, "o+x": 0o645, "all": 0o777, "none": 0o600, "ux-only": 0o100, "ro": 0o444} {
				h.Write(name, "m\n")
				h.Chmod(name, mode)
			}
		}},
		{name: "setuid, setgid and sticky bits", change: func(t *testing.T, h *diffRepo) {
			h.Write("suid", "s\n")
			h.Chmod("suid", 0o4755)
			h.Write("sgid", "s\n")
			h.Chmod("sgid", 0o2644)
			h.Write("sticky/x", "s\n")
			h.Chmod("sticky", 0o1777)
		}},
		{name: "mode-only changes both ways", setup: func(t *testing.T, h *diffRepo) {
			h.Write("a", "a\n")
			h.Write("b", "b\n")
			h.Chmod("b", 0o755)
		}, change: func(t *testing.T, h *diffRepo) {
			h.Chmod("a", 0o755)
			h.Chmod("b", 0o644)
		}},

		// Symlinks.
		{name: "symlinks of every shape", change: func(t *testing.T, h *diffRepo) {
			h.Symlink("/etc/passwd", "abs")
			h.Symlink("..", "up")
			h.Symlink("self", "self")
			h.Symlink("caf\u00e9", "uni")
			h.Symlink(strings.Repeat("t/", 1000)+"x", "long")
			h.Symlink("a\nb", "newline-target")
			h.Symlink("../../../outside", "escape")
		}},
		{name: "symlink replaced by a directory and a directory by a symlink", setup: func(t *testing.T, h *diffRepo) {
			h.Symlink("x", "l")
			h.Write("d/f", "f\n")
		}, change: func(t *testing.T, h *diffRepo) {
			h.Remove("l")
			h.Write("l/inner", "i\n")
			h.Remove("d")
			h.Symlink("l", "d")
		}},
		{name: "symlink target changed, file turned into a symlink to itself", setup: func(t *testing.T, h *diffRepo) {
			h.Symlink("one", "l")
			h.Write("f", "f\n")
		}, change: func(t *testing.T, h *diffRepo) {
			h.Remove("l")
			h.Symlink("two", "l")
			h.Remove("f")
			h.Symlink("f", "f")
		}},
		{name: "files below a symlinked directory are not followed", setup: func(t *testing.T, h *diffRepo) {
			h.Write("real/a", "a\n")
			h.Write("via/a", "a\n")
		}, change: func(t *testing.T, h *diffRepo) {
			h.Remove("via")
			h.Symlink("real", "via")
			h.Write("real/b", "b\n")
		}},

		// Special files git cannot track.
		{name: "a FIFO and a socket are skipped", change: func(t *testing.T, h *diffRepo) {
			must(t, syscall.Mkfifo(h.path("fifo"), 0o644))
			must(t, syscall.Mkfifo(h.path("fifo.txt"), 0o644))
			h.Write("ok.txt", "ok\n")
		}},

		// Sizes and content.
		{name: "empty, binary and large files", change: func(t *testing.T, h *diffRepo) {
			h.Write("empty", "")
			h.Write("nul", "\x00")
			h.Write("bin", string([]byte{0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'J', 'F', 'I', 'F'}))
			h.Write("threshold-1", strings.Repeat("t", streamThreshold-1))
			h.Write("threshold", strings.Repeat("t", streamThreshold))
			h.Write("threshold+1", strings.Repeat("t", streamThreshold+1))
		}},
		{name: "a sparse file", change: func(t *testing.T, h *diffRepo) {
			f, err := os.Create(h.path("sparse"))
			must(t, err)
			must(t, f.Truncate(6<<20))
			_, err = f.WriteAt([]byte("end"), 6<<20)
			must(t, err)
			must(t, f.Close())
		}},
		{name: "hard links are two files", change: func(t *testing.T, h *diffRepo) {
			h.Write("one", "same\n")
			must(t, os.Link(h.path("one"), h.path("two")))
		}},

		// Renames and deletions.
		{name: "case-only rename", setup: func(t *testing.T, h *diffRepo) { h.Write("Readme.md", "r\n"); h.Write("Dir/a", "a\n") },
			change: func(t *testing.T, h *diffRepo) { h.Rename("Readme.md", "README.md"); h.Rename("Dir", "dir") }},
		{name: "swap two files", setup: func(t *testing.T, h *diffRepo) { h.Write("a", "A\n"); h.Write("b", "B\n") },
			change: func(t *testing.T, h *diffRepo) { h.Rename("a", "tmp"); h.Rename("b", "a"); h.Rename("tmp", "b") }},
		{name: "rename a directory tree and leave an empty one behind", setup: func(t *testing.T, h *diffRepo) {
			writeAll(h, "old/a", "old/b/c", "old/b/d/e")
		}, change: func(t *testing.T, h *diffRepo) { h.Rename("old", "new"); h.Mkdir("old/b") }},
		{name: "delete a directory with tracked and ignored files", setup: func(t *testing.T, h *diffRepo) {
			h.Write(".gitignore", "*.o\n")
			writeAll(h, "gone/a.c", "gone/b/c.c")
		}, change: func(t *testing.T, h *diffRepo) { h.Write("gone/a.o", "o"); h.Remove("gone/a.c"); h.Remove("gone/b") }},
		{name: "file and directory of the same name trade places", setup: func(t *testing.T, h *diffRepo) {
			writeAll(h, "x", "y/z")
		}, change: func(t *testing.T, h *diffRepo) {
			h.Remove("x")
			h.Remove("y")
			h.Write("x/z", "x\n")
			h.Write("y", "y\n")
		}},
		{name: "names sorting around a directory (a.b, a/, a0)", setup: func(t *testing.T, h *diffRepo) {
			writeAll(h, "a/x")
		}, change: func(t *testing.T, h *diffRepo) { writeAll(h, "a.b", "a0", "a-", "a/y", "a!", "a~") }},

		// Index flags.
		{name: "intent-to-add file deleted from disk", change: func(t *testing.T, h *diffRepo) {
			h.Write("ita", "x\n")
			h.Git("add", "-N", "ita")
			h.Remove("ita")
			h.Write("other", "o\n")
		}},
		{name: "skip-worktree file deleted from disk is kept", setup: func(t *testing.T, h *diffRepo) { h.Write("sw", "x\n") },
			change: func(t *testing.T, h *diffRepo) {
				h.Git("update-index", "--skip-worktree", "sw")
				h.Remove("sw")
			}},
		{name: "staged content differs from disk and HEAD", setup: func(t *testing.T, h *diffRepo) { h.Write("f", "head\n") },
			change: func(t *testing.T, h *diffRepo) {
				h.Write("f", "staged\n")
				h.Git("add", "f")
				h.Write("f", "head\n")
			}},
		{name: "a staged deletion of a file still on disk is undone", setup: func(t *testing.T, h *diffRepo) { h.Write("f", "f\n") },
			change: func(t *testing.T, h *diffRepo) { h.Git("rm", "-q", "--cached", "f") }},

		// Nested repositories.
		{name: "nested repository with only untracked changes keeps its gitlink", setup: func(t *testing.T, h *diffRepo) {
			commitNested(h, "m", map[string]string{"a": "a\n"})
		}, change: func(t *testing.T, h *diffRepo) { h.Write("m/a", "dirty\n"); h.Write("m/new", "n\n") }},
		{name: "nested repository with a detached HEAD", setup: func(t *testing.T, h *diffRepo) {
			commitNested(h, "m", map[string]string{"a": "a\n"})
		}, change: func(t *testing.T, h *diffRepo) {
			h.Write("m/a", "v2\n")
			h.GitIn("m", "commit", "-q", "-am", "v2")
			h.GitIn("m", "checkout", "-q", "--detach", "HEAD~1")
		}},
		{name: "nested repository whose .git is a gitdir file", change: func(t *testing.T, h *diffRepo) {
			commitNested(h, "m", map[string]string{"a": "a\n"})
			h.Write(".gitignore", "/moved-gitdir/\n") // its index and logs differ between the sides
			h.Rename("m/.git", "moved-gitdir")
			h.Write("m/.git", "gitdir: ../moved-gitdir\n")
		}},
		{name: "nested repository on an unborn branch with other branches", change: func(t *testing.T, h *diffRepo) {
			commitNested(h, "m", map[string]string{"a": "a\n"})
			h.GitIn("m", "checkout", "-q", "--orphan", "empty")
			h.Write(".gitignore", "/m/\n") // git add -A refuses it unignored; the other case covers that
		}},
		{name: "a directory laid out like a bare repository is plain files", change: func(t *testing.T, h *diffRepo) {
			h.Write("bare/HEAD", "ref: refs/heads/main\n")
			h.Mkdir("bare/objects")
			h.Write("bare/refs/heads/.keep", "")
			h.Write("bare/config", "[core]\n\tbare = true\n")
		}},
		{name: "nested repository inside an ignored directory", change: func(t *testing.T, h *diffRepo) {
			h.Write(".gitignore", "deps/\n")
			commitNested(h, "deps/lib", map[string]string{"a": "a\n"})
		}},
		{name: "gitlink whose directory is emptied keeps the gitlink", setup: func(t *testing.T, h *diffRepo) {
			commitNested(h, "m", map[string]string{"a": "a\n"})
		}, change: func(t *testing.T, h *diffRepo) { h.Remove("m"); h.Mkdir("m") }},
		{name: "gitlink replaced by a directory of plain files", setup: func(t *testing.T, h *diffRepo) {
			commitNested(h, "m", map[string]string{"a": "a\n"})
		}, change: func(t *testing.T, h *diffRepo) { h.Remove("m/.git"); h.Write("m/b", "b\n") }},
	},
}

// fsckCases are names git add takes and git fsck rejects: CommitAll refuses
// them, naming fsck's complaint.
var fsckCases = []diffCase{
	{
		name:    "HFS-ignorable code points in .git (git add takes it on Linux, fsck says hasDotgit)",
		change:  func(t *testing.T, h *diffRepo) { h.Write(".g\u200cit/x", "x"); h.Write("ok", "o") },
		refused: "hasDotgit",
	},
	{
		name:    "a BOM before .git, deeper down",
		change:  func(t *testing.T, h *diffRepo) { h.Write("a/\ufeff.GIT/config", "x") },
		refused: "hasDotgit",
	},
	{
		name: "git~1 with core.protectNTFS=false",
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.protectNTFS", "false")
			h.Write("git~1/config", "x")
		},
		refused: "hasDotgit",
	},
	{
		name:    "a directory .gitmodules. (NTFS alias, fsck wants a blob)",
		change:  func(t *testing.T, h *diffRepo) { h.Write(".gitmodules./x", "x") },
		refused: "gitmodulesBlob",
	},
	{
		name:    "a directory named .gitmodules",
		change:  func(t *testing.T, h *diffRepo) { h.Write(".gitmodules/x", "x") },
		refused: "gitmodulesBlob",
	},
	{
		name: "a symlinked .gitmodules with core.protectNTFS=false",
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.protectNTFS", "false")
			h.Write("t", "x")
			h.Symlink("t", "gitmod~1")
		},
		refused: "gitmodulesSymlink",
	},
	{
		name: "an ignored fsck-rejected name is fine",
		change: func(t *testing.T, h *diffRepo) {
			h.Write(".g\u200cit/x", "x")
			h.Write(".gitignore", ".g*it/\n")
			h.Write("ok", "o")
		},
	},
}

func TestDifferentialTree(t *testing.T) {
	runDiffCases(t, fsckCases)
	runDiffBatches(t, []diffBatch{treeBatch})
}
