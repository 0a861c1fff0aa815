package worktree

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/gitcommit"
)

// gitRepo makes a repository with one commit of files, isolated from the
// user's git configuration, with the author set.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	write(t, dir, files)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}

func write(t *testing.T, dir string, files map[string]string) {
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

// Includes lists the ignored files the include file selects, never a
// tracked one; without the file there is nothing to copy.
func TestIncludes(t *testing.T) {
	dir := gitRepo(t, map[string]string{".gitignore": ".env\nlocal/\n", "tracked.json": "{}\n"})
	repo, err := gitcommit.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if files, found, err := Includes(context.Background(), repo); err != nil || found || len(files) != 0 {
		t.Fatalf("Includes without %s = %v, %v, %v; want none, not found", IncludeFile, files, found, err)
	}
	write(t, dir, map[string]string{IncludeFile: ".env\nlocal/\n*.json\n", ".env": "TOKEN=abc\n", "local/settings.json": "{}\n"})
	files, found, err := Includes(context.Background(), repo)
	if err != nil || !found {
		t.Fatalf("Includes = %v, %v", found, err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Path)
	}
	if want := ".env local/settings.json"; strings.Join(got, " ") != want {
		t.Errorf("Includes = %v, want %s", got, want)
	}
}

// CopyIncludes copies files with their modes and relative symlinks that
// stay inside; it keeps what the worktree has, and writes nothing through
// a symlink or out of the repository.
func TestCopyIncludes(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	write(t, src, map[string]string{".env": "TOKEN=abc\n", "local/settings.json": "{}\n", "kept": "user's\n", "linked/x": "x\n"})
	if err := os.Chmod(filepath.Join(src, ".env"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"link": ".env", "out": "/etc/hostname", "up": "../elsewhere"} {
		if err := os.Symlink(target, filepath.Join(src, name)); err != nil {
			t.Fatal(err)
		}
	}
	write(t, dst, map[string]string{"kept": "agent's\n"})
	if err := os.Symlink(t.TempDir(), filepath.Join(dst, "linked")); err != nil { // a tracked symlink in the worktree
		t.Fatal(err)
	}
	files := []gitcommit.IgnoredFile{
		{Path: ".env", Mode: 0o600}, {Path: "local/settings.json", Mode: 0o644}, {Path: "kept", Mode: 0o644},
		{Path: "linked/x", Mode: 0o644}, {Path: "link", Mode: fs.ModeSymlink | 0o777},
		{Path: "out", Mode: fs.ModeSymlink | 0o777}, {Path: "up", Mode: fs.ModeSymlink | 0o777},
	}
	var logged bytes.Buffer
	n, err := CopyIncludes(slog.New(slog.NewTextHandler(&logged, nil)), src, dst, files)
	if err != nil || n != 3 {
		t.Fatalf("CopyIncludes = %d, %v; want 3 copied\n%s", n, err, logged.String())
	}
	if st, err := os.Stat(filepath.Join(dst, ".env")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf(".env: %v, %v; want mode 0600", st, err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "local", "settings.json")); err != nil || string(b) != "{}\n" {
		t.Errorf("local/settings.json = %q, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "kept")); string(b) != "agent's\n" {
		t.Errorf("kept = %q, want the worktree's own", b)
	}
	if target, err := os.Readlink(filepath.Join(dst, "link")); err != nil || target != ".env" {
		t.Errorf("link -> %q, %v; want .env", target, err)
	}
	for _, name := range []string{"out", "up"} {
		if _, err := os.Lstat(filepath.Join(dst, name)); err == nil {
			t.Errorf("%s, a symlink out of the repository, was copied", name)
		}
	}
	for _, want := range []string{"a symlink pointing out of the repository", "its directory linked is a symlink in the worktree"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logged.String())
		}
	}
	if n, err := CopyIncludes(slog.New(slog.DiscardHandler), src, dst, nil); n != 0 || err != nil {
		t.Errorf("CopyIncludes of nothing = %d, %v", n, err)
	}
}
