// Command benchcommit drives scripts/bench-commit.sh: it generates the
// benchmark worktree, applies one round of edits, and runs debussy's commit
// path (gitcommit.Open + CommitAll) so the script can time it against
// `git add -A && git commit` on an identical copy.
//
//	benchcommit gen DIR [TRACKED IGNORED]   write the files (not the repo)
//	benchcommit edit DIR ROUND [EDITS TRACKED]  modify EDITS (10) of TRACKED (20000) files, add 1 new one
//	benchcommit addnew DIR ROUND N          add N new files under new-ROUND/
//	benchcommit commit DIR [CPUPROFILE]     commit everything; prints hash and file count
//	benchcommit serve DIR                   one process, a run's: commits everything for each
//	                                        line read, printing hash and file count for each
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"

	"github.com/debussy-dev/debussy/gitcommit"
)

const filesPerDir = 100

// benchMessage is every commit's message: a checkpoint's, as a run writes.
var benchMessage = gitcommit.Message{Subject: "bench", Run: "bench", Phase: "1", Event: "restart"}.String()

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchcommit:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	if len(args) < 2 {
		return errors.New("usage: benchcommit gen|edit|commit DIR [...]")
	}
	dir := args[1]
	switch args[0] {
	case "gen":
		tracked, ignored := 20000, 5000
		if len(args) == 4 {
			var err1, err2 error
			tracked, err1 = strconv.Atoi(args[2])
			ignored, err2 = strconv.Atoi(args[3])
			if err := errors.Join(err1, err2); err != nil {
				return fmt.Errorf("parse counts: %w", err)
			}
		}
		return gen(dir, tracked, ignored)
	case "edit":
		if len(args) != 3 && len(args) != 5 {
			return errors.New("usage: benchcommit edit DIR ROUND [EDITS TRACKED]")
		}
		round, err := strconv.Atoi(args[2])
		if err != nil {
			return fmt.Errorf("parse round: %w", err)
		}
		edits, tracked := 10, 20000
		if len(args) == 5 {
			var err1, err2 error
			edits, err1 = strconv.Atoi(args[3])
			tracked, err2 = strconv.Atoi(args[4])
			if err := errors.Join(err1, err2); err != nil {
				return fmt.Errorf("parse counts: %w", err)
			}
		}
		return edit(dir, round, edits, tracked)
	case "addnew":
		if len(args) != 4 {
			return errors.New("usage: benchcommit addnew DIR ROUND N")
		}
		round, err1 := strconv.Atoi(args[2])
		n, err2 := strconv.Atoi(args[3])
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("parse arguments: %w", err)
		}
		return addNew(dir, round, n)
	case "serve":
		// As in a run, one process (one Repo) makes every commit.
		r, err := gitcommit.Open(dir)
		if err != nil {
			return err
		}
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			c, err := r.CommitAll(context.Background(), benchMessage)
			if err != nil {
				return err
			}
			fmt.Fprintln(out, c.Hash, c.Files)
		}
		return in.Err()
	case "commit":
		if len(args) == 3 {
			f, err := os.Create(args[2])
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		r, err := gitcommit.Open(dir)
		if err != nil {
			return err
		}
		c, err := r.CommitAll(context.Background(), benchMessage)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, c.Hash, c.Files)
		return nil
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// gen writes tracked source files in directories of 100 and an ignored
// node_modules tree with its own nesting, plus the .gitignore excluding it.
func gen(dir string, tracked, ignored int) error {
	write := func(path, content string) error {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, []byte(content), 0o644)
	}
	if err := write(filepath.Join(dir, ".gitignore"), "node_modules/\n*.log\n"); err != nil {
		return err
	}
	for i := range tracked {
		p := filepath.Join(dir, "src", fmt.Sprintf("pkg%03d", i/filesPerDir), fmt.Sprintf("file%03d.go", i%filesPerDir))
		if err := write(p, fmt.Sprintf("package pkg%03d\n\n// file %d\nconst X%d = %d\n", i/filesPerDir, i, i, i*7)); err != nil {
			return err
		}
	}
	for i := range ignored {
		p := filepath.Join(dir, "node_modules", fmt.Sprintf("dep%03d", i/filesPerDir), "lib", fmt.Sprintf("index%03d.js", i%filesPerDir))
		if err := write(p, fmt.Sprintf("module.exports = %d;\n", i)); err != nil {
			return err
		}
	}
	return nil
}

// edit changes edits tracked files spread over the tree of tracked files
// and adds one new file; the same round gives the same bytes, so both
// copies end up identical.
func edit(dir string, round, edits, tracked int) error {
	for k := range edits {
		i := (round*edits + k) * 1999 % tracked
		p := filepath.Join(dir, "src", fmt.Sprintf("pkg%03d", i/filesPerDir), fmt.Sprintf("file%03d.go", i%filesPerDir))
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f, "// round %d edit %d\n", round, k)
		if err := errors.Join(err, f.Close()); err != nil {
			return err
		}
	}
	p := filepath.Join(dir, "src", "new", fmt.Sprintf("round%03d.go", round))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(fmt.Sprintf("package new\n\nconst Round%d = %d\n", round, round)), 0o644)
}

// addNew writes n untracked files in directories of 100 under new-ROUND/:
// the agent's "generated a whole new tree" case, all hashing and walking.
func addNew(dir string, round, n int) error {
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("new-%03d", round), fmt.Sprintf("pkg%03d", i/filesPerDir), fmt.Sprintf("file%03d.go", i%filesPerDir))
		if i%filesPerDir == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
		}
		content := fmt.Sprintf("package pkg%03d\n\n// round %d file %d\nconst X%d = %d\n", i/filesPerDir, round, i, i, i*7)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}
