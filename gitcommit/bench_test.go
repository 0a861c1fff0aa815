package gitcommit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCommitWithUserFiles is one commit of a run (10 edited files in
// a 20,000-file tree, the agent's `git status` before it) in each of four
// repositories, in turn: with no untracked files of the user's at the
// start, and with 20,000 in directories of their own (own), half of them
// beside tracked files (beside), or all at the top of the tree (top).
// What the user's files cost per commit is the ratio to the commit with
// none (issue 55: at most 1.2 times): own-x, beside-x and top-x of the
// median wall times, own-cpu-x, beside-cpu-x and top-cpu-x of the CPU time
// of debussy and its git processes. The repositories take turns so that a
// shared machine's load, which moves by 15% from minute to minute, weighs
// on each alike. Run it with -benchtime=20x; it is never a timed
// assertion.
func BenchmarkCommitWithUserFiles(b *testing.B) {
	isolateB(b)
	cases := []*benchRepo{{name: "none"}, {name: "own", users: 20000}, {name: "beside", users: 20000}, {name: "top", users: 20000}}
	for _, c := range cases {
		c.setUp(b)
		c.commit(b, 0) // the first commit of a run reads the user's files once
		c.wall, c.cpu = nil, 0
	}
	b.ResetTimer()
	for i := range b.N {
		for _, c := range cases {
			c.commit(b, i+1)
		}
	}
	b.StopTimer()
	none := cases[0]
	b.ReportMetric(float64(median(none.wall).Microseconds())/1000, "none-ms")
	for _, c := range cases[1:] {
		b.ReportMetric(float64(median(c.wall))/float64(median(none.wall)), c.name+"-x")
		b.ReportMetric(float64(c.cpu)/float64(none.cpu), c.name+"-cpu-x")
	}
}

// benchRepo is one repository of BenchmarkCommitWithUserFiles.
type benchRepo struct {
	name  string
	users int

	dir   string
	r     *Repo
	files Fingerprints
	wall  []time.Duration
	cpu   time.Duration
}

const benchTracked, benchPerDir = 20000, 100

func (c *benchRepo) setUp(b *testing.B) {
	c.dir = filepath.Join(b.TempDir(), "repo")
	for i := range benchTracked {
		writeB(b, filepath.Join(c.dir, "src", fmt.Sprintf("pkg%03d", i/benchPerDir), fmt.Sprintf("f%03d.go", i%benchPerDir)), fmt.Sprintf("package p\n\nconst X%d = %d\n", i, i))
	}
	// Ignored entries at the root, as most repositories have (a build
	// directory, logs): the user's files are not all that is untracked.
	writeB(b, filepath.Join(c.dir, ".gitignore"), "/build/\n*.log\n")
	writeB(b, filepath.Join(c.dir, "build", "out.bin"), "built\n")
	writeB(b, filepath.Join(c.dir, "run.log"), "log\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=B", "-c", "user.email=b@x", "-c", "gc.auto=0", "commit", "-q", "-m", "init"}, {"gc", "-q"}} {
		if out, err := gitCmd(c.dir, args...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for i := range c.users {
		writeB(b, filepath.Join(c.dir, c.userFile(i)), fmt.Sprintf("the user's note %d\n", i))
	}
	time.Sleep(1500 * time.Millisecond) // the user's files are older than the run
	var err error
	if c.r, err = Open(c.dir, WithEnv(append(os.Environ(), "GIT_AUTHOR_NAME=B", "GIT_AUTHOR_EMAIL=b@x", "GIT_COMMITTER_NAME=B", "GIT_COMMITTER_EMAIL=b@x"))); err != nil {
		b.Fatal(err)
	}
	if c.files, err = c.r.Untracked(context.Background()); err != nil || len(c.files) != c.users {
		b.Fatalf("Untracked: %d files, %v", len(c.files), err)
	}
}

// userFile is where the i-th of the user's files is.
func (c *benchRepo) userFile(i int) string {
	switch {
	case c.name == "top":
		return fmt.Sprintf("scratch%05d.txt", i)
	case c.name == "beside" && i%2 == 1:
		return filepath.Join("src", fmt.Sprintf("pkg%03d", (i/2)%(benchTracked/benchPerDir)), fmt.Sprintf("mine%05d.txt", i))
	}
	return filepath.Join("notes", fmt.Sprintf("d%03d", i/benchPerDir), fmt.Sprintf("n%03d.txt", i%benchPerDir))
}

// commit edits 10 files, runs the agent's `git status` (it rewrites the
// index with fresher stat data, as agents do between commits) and times
// CommitAll alone.
func (c *benchRepo) commit(b *testing.B, round int) {
	b.StopTimer()
	for k := range 10 {
		i := (round*10 + k) * 1999 % benchTracked
		writeB(b, filepath.Join(c.dir, "src", fmt.Sprintf("pkg%03d", i/benchPerDir), fmt.Sprintf("f%03d.go", i%benchPerDir)), fmt.Sprintf("package p\n\n// round %d\n", round))
	}
	if out, err := gitCmd(c.dir, "status", "--porcelain").CombinedOutput(); err != nil {
		b.Fatalf("git status: %v\n%s", err, out)
	}
	b.StartTimer()
	start, before := time.Now(), cpuTime()
	if _, err := c.r.CommitAll(context.Background(), "bench", Exclude(c.files, nil)); err != nil {
		b.Fatal(err)
	}
	c.cpu += cpuTime() - before
	c.wall = append(c.wall, time.Since(start))
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func isolateB(b *testing.B) {
	home := b.TempDir()
	b.Setenv("HOME", home)
	b.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

func writeB(b *testing.B, p, content string) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}

// cpuTime is the user and system time of this process and its reaped
// children.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}
