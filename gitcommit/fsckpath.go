package gitcommit

import (
	"fmt"
	"strings"
)

// fsckPathProblem is what `git fsck` would say about a tree holding path, ""
// when nothing. git add accepts some names fsck rejects whatever the core.protect*
// settings: ".g\u200cit" (HFS+ reads it as ".git") on Linux, a directory
// ".gitmodules." or ".gitattributes" (fsck wants a blob there, under any
// name NTFS or HFS+ reads as that).
// A remote that checks objects (GitHub, transfer.fsckObjects) rejects the
// push, so CommitAll refuses such a new path rather than agree with git add.
func fsckPathProblem(path string, symlink bool) string {
	for rest := path; ; {
		comp, tail, more := strings.Cut(rest, "/")
		if isHFSDotGeneric(comp, "git") || isNTFSDotGit(comp) {
			return "hasDotgit: contains '.git'"
		}
		gitmodules := isHFSDotGeneric(comp, "gitmodules") || isNTFSDotGitmodules(comp) || strings.EqualFold(comp, ".gitmodules")
		gitattributes := isHFSDotGeneric(comp, "gitattributes") || isNTFSDotGeneric(comp, "gitattributes", "gi7d29") ||
			strings.EqualFold(comp, ".gitattributes")
		switch {
		case gitmodules && more:
			return "gitmodulesBlob: non-blob found at .gitmodules"
		case gitmodules && symlink:
			return "gitmodulesSymlink: .gitmodules is a symbolic link"
		case gitattributes && more:
			return "gitattributesBlob: non-blob found at .gitattributes"
		}
		if !more {
			return ""
		}
		rest = tail
	}
}

// FsckPathError lists new paths git add would take but `git fsck` (and so
// every fsck-checking remote) rejects.
type FsckPathError struct {
	Paths   []string
	Problem string // fsck's message for the first path
}

func (e *FsckPathError) Error() string {
	return fmt.Sprintf("%s would make a tree git fsck rejects (%s), and so would a remote that checks what it receives; rename, remove or ignore it",
		strings.Join(e.Paths, ", "), e.Problem)
}
