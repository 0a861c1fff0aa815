package tests

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/debussy-dev/debussy/state"
)

// How a chaos run plays: the first `debussy run` with the fault, reruns,
// and the invariants checked after every one of them.

// play runs the plan with the fault, then reruns it until it completes (at
// most twice), checking the invariants after each run and at the end.
func (c *chaosRun) play() {
	t := c.t
	cmd, stdout, stderr := c.h.command("run", chaosPlan)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start debussy: %v", err)
	}
	ended := make(chan struct{})
	injected := make(chan faultEffect, 1)
	go func() { injected <- c.inject(cmd, ended) }()
	r := c.h.wait(cmd, stdout, stderr, 4*time.Minute)
	close(ended)
	effect := <-injected
	c.landed = effect.fired && !effect.early
	if !effect.fired {
		t.Errorf("the fault never fired: the run ended before %s", c.moment())
	}
	c.after(r, effect.killed)
	c.expectFirst(r, effect)

	for range 2 {
		if r.Code == 0 {
			break
		}
		r = c.h.run("run", chaosPlan)
		c.after(r, false)
	}
	if r.Code != 0 {
		t.Errorf("the plan did not finish after two reruns: %s", r)
	}
	c.final()
}

// faultEffect is what the injector did.
type faultEffect struct {
	fired  bool
	killed bool   // debussy itself was SIGKILLed: no message, leftovers allowed until the rerun
	second result // second-run: how the second `debussy run` ended
	early  bool   // the first run had ended before the fault landed
}

// inject waits for the moment, injects the fault, looks at the worktree,
// and undoes what must be undone (a lock released, the disk freed, the key
// accepted again) before the reruns.
func (c *chaosRun) inject(debussy *exec.Cmd, ended <-chan struct{}) (e faultEffect) {
	select {
	case <-c.fired:
	case <-ended:
		return e
	}
	e.fired = true
	if !sleepUnless(c.delay, ended) && c.kind != fault401 && c.kind != fault529Burst && c.kind != faultCutStream {
		e.early = true
	}
	c.lookAtWorktree() // what was written when the fault hit
	defer c.lookAtWorktree()
	switch c.kind {
	case faultKillDebussy:
		e.killed = debussy.Process.Signal(syscall.SIGKILL) == nil && !e.early
	case faultTermDebussy:
		_ = debussy.Process.Signal(syscall.SIGTERM)
	case faultKillClaude:
		e.early = !c.killWhenFound(ended, func(p proc) bool { return p.ppid == debussy.Process.Pid && p.isClaude() }, "claude")
	case faultKillTool:
		e.early = !c.killWhenFound(ended, func(p proc) bool { return p.argv == "perl -e sleep "+longToolSeconds }, "the long tool")
	case faultIndexLock:
		c.holdIndexLock()
	case faultDiskFull:
		c.fillDisk(ended)
	case faultSecondRun:
		e.second = c.h.run("run", chaosPlan)
		e.early = e.early || e.second.Code == 0
	case fault401:
		<-ended
		c.mu.Lock()
		c.unauthorized = false // the user fixed the key
		c.mu.Unlock()
	}
	return e
}

// sleepUnless waits d, or less if ended closes; it reports whether the
// whole wait passed.
func sleepUnless(d time.Duration, ended <-chan struct{}) bool {
	select {
	case <-time.After(d):
		return true
	case <-ended:
		return false
	}
}

// expectFirst checks what the faulted run itself must have said.
func (c *chaosRun) expectFirst(r result, e faultEffect) {
	t := c.t
	switch c.kind {
	case faultTermDebussy:
		if !e.early && r.Code != 130 && r.Code != 0 {
			t.Errorf("SIGTERM: want exit 130 (interrupted): %s", r)
		}
		if r.Code == 130 {
			// Interrupted means committed: nothing the agent wrote waits for the rerun.
			if lost := c.missingFrom("HEAD"); len(lost) > 0 {
				t.Errorf("SIGTERM: exit 130 but not committed: %q", lost)
			}
		}
	case fault401:
		if c.targetPhase == c.phases && c.targetTurn == 3 && r.Code == 0 {
			// Refused after the last phase's `debussy done`: the work was
			// done and signalled, so the gates decide and the plan completes.
			break
		}
		if r.Code != 2 || !strings.Contains(r.Stderr, "401") || !strings.Contains(r.Stderr, "ANTHROPIC_API_KEY") {
			t.Errorf("401 midway: want exit 2 naming the status and ANTHROPIC_API_KEY: %s", r)
		}
	case faultSecondRun:
		s := e.second
		switch {
		case s.Code == 2 && strings.Contains(s.Stderr, "another debussy run holds the lock"):
		case s.Code == 0 && !strings.Contains(s.Stderr, "session started") && !strings.Contains(s.Stderr, "phase started"):
			// The first run had just released the lock: the second found
			// every phase done.
		default:
			t.Errorf("second run: want exit 2 saying the first holds the lock: %s", s)
		}
		if r.Code != 0 {
			t.Errorf("the first run should go on undisturbed by the second: %s", r)
		}
	}
}

// after checks the invariants that hold after every run, and records what
// the agent had written by then.
func (c *chaosRun) after(r result, killed bool) {
	t := c.t
	c.exits = append(c.exits, r.Code)
	if !killed && r.Code != 0 {
		// A run that cannot go on says why and how to resume.
		if !strings.Contains(r.Stderr, "resume with:\n  debussy run "+chaosPlan) {
			t.Errorf("exit %d without the command to resume:\n%s", r.Code, r.Stderr)
		}
	}
	c.branchInLedger()
	if !killed {
		c.noLocks()
		c.noProcessesLeft(5 * time.Second)
	}
	c.lookAtWorktree()
}

// final checks the end state: the plan completed in git and in .debussy/,
// every line the agent ever wrote committed, the user's files untouched,
// nothing left running or locked.
func (c *chaosRun) final() {
	t := c.t
	lost := c.missingFrom("HEAD")
	c.lost = len(lost)
	if len(lost) > 0 {
		t.Errorf("LOST: %d lines the agent wrote are not in the final commit: %q", len(lost), lost)
	}
	for rel, want := range c.userFiles {
		got, err := os.ReadFile(filepath.Join(c.h.Repo, rel))
		if err != nil || string(got) != want {
			t.Errorf("the user's %s changed: %q, %v", rel, got, err)
		}
	}
	committed := c.h.git("log", "--name-only", "--format=", c.base+"..HEAD")
	for rel := range c.userFiles {
		if strings.Contains(committed, rel) {
			t.Errorf("a debussy commit carries the user's %s", rel)
		}
	}
	var want []string
	for rel := range c.userFiles {
		want = append(want, "?? "+rel)
	}
	slices.Sort(want)
	if st := c.h.git("status", "--porcelain", "--untracked-files=all"); st != strings.Join(want, "\n") {
		t.Errorf("the worktree after the plan completed: %q, want only the user's files untracked", st)
	}
	c.stateAgreesWithGit()
	c.noLocks()
	c.noProcessesLeft(10 * time.Second)
}

// lookAtWorktree records every line of the agent's files (p1/, p2/, ...).
func (c *chaosRun) lookAtWorktree() {
	for i := 1; i <= c.phases; i++ {
		dir := filepath.Join(c.h.Repo, fmt.Sprintf("p%d", i))
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(c.h.Repo, path)
			lines := strings.Split(string(data), "\n")
			// The last piece has no newline yet: still being written.
			c.mu.Lock()
			for _, line := range lines[:len(lines)-1] {
				if line != "" {
					c.written[rel+"\x00"+line] = true
				}
			}
			c.mu.Unlock()
			return nil
		})
	}
}

// missingFrom lists the recorded lines that rev does not have.
func (c *chaosRun) missingFrom(rev string) []string {
	c.mu.Lock()
	keys := make([]string, 0, len(c.written))
	for k := range c.written {
		keys = append(keys, k)
	}
	c.mu.Unlock()
	slices.Sort(keys)
	files := map[string]map[string]bool{}
	var missing []string
	for _, k := range keys {
		rel, line, _ := strings.Cut(k, "\x00")
		lines, ok := files[rel]
		if !ok {
			lines = map[string]bool{}
			out, err := exec.Command("git", "-C", c.h.Repo, "show", rev+":"+rel).Output()
			if err == nil {
				for _, l := range strings.Split(string(out), "\n") {
					lines[l] = true
				}
			}
			files[rel] = lines
		}
		if !lines[line] {
			missing = append(missing, rel+": "+line)
		}
	}
	return missing
}

// branchInLedger fails if the user's branch points at a debussy commit
// that .debussy/state.json does not list: git and the ledger disagree
// about what the run did.
func (c *chaosRun) branchInLedger() {
	head := c.h.git("rev-parse", "HEAD")
	if c.h.git("log", "-1", "--format=%(trailers:key=Debussy-Run,valueonly)", head) == "" {
		return
	}
	l, err := state.New(filepath.Join(c.h.Repo, state.DirName)).Load()
	if err != nil {
		c.t.Errorf("load the ledger: %v", err)
		return
	}
	for _, r := range l.Runs {
		for _, p := range r.Phases {
			if slices.Contains(p.Commits, head) || p.Merge == head {
				return
			}
		}
	}
	c.t.Errorf("the branch points at %s (%s), which no run in .debussy/state.json lists",
		head[:10], c.h.git("log", "-1", "--format=%s", head))
}

// stateAgreesWithGit checks the end: no run still marked running; the
// latest run has every phase completed, or skipped at a commit in the
// branch; every commit the ledger lists is in the branch; and no run's
// phase record contradicts the outcome git has from that run.
func (c *chaosRun) stateAgreesWithGit() {
	t := c.t
	l, err := state.New(filepath.Join(c.h.Repo, state.DirName)).Load()
	if err != nil || len(l.Runs) == 0 {
		t.Errorf("load the ledger: %v (%d runs)", err, len(l.Runs))
		return
	}
	inBranch := func(commit string) bool {
		return exec.Command("git", "-C", c.h.Repo, "merge-base", "--is-ancestor", commit, "HEAD").Run() == nil
	}
	outcome := map[string]string{} // run + phase → the newest event git has for it
	ended := map[string]string{}   // phase → the newest event git has for it
	for _, line := range strings.Split(c.h.git("log", "--format=%(trailers:key=Debussy-Run,valueonly,separator=)|%(trailers:key=Debussy-Phase,valueonly,separator=)|%(trailers:key=Debussy-Event,valueonly,separator=)", c.base+"..HEAD"), "\n") {
		run, rest, _ := strings.Cut(line, "|")
		phase, event, _ := strings.Cut(rest, "|")
		if !slices.Contains([]string{"completed", "failed", "blocked"}, event) {
			continue
		}
		if _, seen := outcome[run+"/"+phase]; !seen {
			outcome[run+"/"+phase] = event
		}
		if _, seen := ended[phase]; !seen {
			ended[phase] = event
		}
	}
	for _, r := range l.Runs {
		if r.Status == state.StatusRunning {
			t.Errorf("run %s is still marked running after the plan completed", r.ID)
		}
		for _, p := range r.Phases {
			for _, commit := range p.Commits {
				if !inBranch(commit) {
					t.Errorf("run %s phase %s lists commit %s, which is not in the branch", r.ID, p.ID, commit)
				}
			}
			if ev, ok := outcome[r.ID+"/"+p.ID]; ok && ev != string(p.Status) {
				t.Errorf("run %s phase %s is %s in .debussy/state.json but %s in git", r.ID, p.ID, p.Status, ev)
			}
		}
	}
	last := l.Latest()
	for i := 1; i <= c.phases; i++ {
		id := strconv.Itoa(i)
		if ended[id] != "completed" {
			t.Errorf("phase %s: the newest outcome in git is %q, want completed (a clone would not know it is done)", id, ended[id])
		}
		p := last.Phase(id)
		switch {
		case p == nil:
			t.Errorf("the last run %s has no phase %s", last.ID, id)
		case p.Status == state.StatusCompleted, p.Status == state.StatusSkipped && len(p.Commits) > 0:
		default:
			t.Errorf("the last run %s has phase %s %s (commits %v), want completed", last.ID, id, p.Status, p.Commits)
		}
	}
}

// noLocks fails if git's or debussy's lock files were left behind.
func (c *chaosRun) noLocks() {
	_ = filepath.WalkDir(filepath.Join(c.h.Repo, ".git"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".lock") {
			c.t.Errorf("lock left in .git: %s", path)
		}
		return nil
	})
}

// noProcessesLeft fails if a process of this run (its environment carries
// the run's mark, or its working directory is in the repository) is still
// alive after limit.
func (c *chaosRun) noProcessesLeft(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for {
		var left []string
		for _, p := range procs() {
			if p.mark == c.mark || p.cwd == c.h.Repo || strings.HasPrefix(p.cwd, c.h.Repo+"/") {
				left = append(left, fmt.Sprintf("%d %s", p.pid, p.argv))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Errorf("processes left behind: %q", left)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// proc is a live process as /proc shows it.
type proc struct {
	pid, ppid int
	argv, cwd string
	mark      string // its DEBUSSY_CHAOS_MARK
}

func (p proc) isClaude() bool {
	return strings.Contains(p.argv, "claude") && strings.Contains(p.argv, "stream-json")
}

func procs() []proc {
	entries, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		p := proc{pid: pid}
		status, err := os.ReadFile(filepath.Join(dir, "status"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(strings.NewReader(string(status)))
		zombie := false
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "PPid:"); ok {
				p.ppid, _ = strconv.Atoi(strings.TrimSpace(v))
			}
			if v, ok := strings.CutPrefix(sc.Text(), "State:"); ok && strings.HasPrefix(strings.TrimSpace(v), "Z") {
				zombie = true
			}
		}
		if zombie {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		p.argv = strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
		p.cwd, _ = os.Readlink(filepath.Join(dir, "cwd"))
		environ, _ := os.ReadFile(filepath.Join(dir, "environ"))
		for _, kv := range strings.Split(string(environ), "\x00") {
			if v, ok := strings.CutPrefix(kv, "DEBUSSY_CHAOS_MARK="); ok {
				p.mark = v
			}
		}
		out = append(out, p)
	}
	return out
}

// killWhenFound SIGKILLs the first process of this run that match accepts,
// looking for up to 20 s (claude may be between sessions); it reports
// whether it killed one before the run ended.
func (c *chaosRun) killWhenFound(ended <-chan struct{}, match func(proc) bool, what string) bool {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, p := range procs() {
			if p.mark == c.mark && match(p) {
				if err := syscall.Kill(p.pid, syscall.SIGKILL); err == nil {
					c.t.Logf("chaos: SIGKILLed %s, pid %d: %s", what, p.pid, p.argv)
					return true
				}
			}
		}
		if !sleepUnless(50*time.Millisecond, ended) {
			c.t.Logf("chaos: the run ended before %s could be killed", what)
			return false
		}
	}
	c.t.Errorf("chaos: found no %s to kill", what)
	return false
}

// holdIndexLock is another git process holding .git/index.lock for c.hold.
func (c *chaosRun) holdIndexLock() {
	lock := filepath.Join(c.h.Repo, ".git", "index.lock")
	holder := exec.Command("sh", "-c", `set -C; : > "$1" || exit 1; sleep "$2"; rm -f "$1"`, "holder", lock,
		strconv.FormatFloat(c.hold.Seconds(), 'f', 3, 64))
	if err := holder.Run(); err != nil {
		c.t.Logf("chaos: index.lock was taken already: %v", err)
	}
}

// fillDisk fills the run's small filesystem, keeps it full for c.hold (or
// until the run ends), then frees it.
func (c *chaosRun) fillDisk(ended <-chan struct{}) {
	filler := filepath.Join(filepath.Dir(c.h.Repo), "filler")
	f, err := os.OpenFile(filler, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		c.t.Errorf("create the filler: %v", err)
		return
	}
	chunk := make([]byte, 1<<20)
	for size := len(chunk); size > 0; {
		if _, err := f.Write(chunk[:size]); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				c.t.Errorf("fill the disk: %v", err)
				break
			}
			size /= 2
		}
	}
	_ = f.Close()
	c.t.Logf("chaos: disk full for %s", c.hold)
	sleepUnless(c.hold, ended)
	if err := os.Remove(filler); err != nil {
		c.t.Errorf("free the disk: %v", err)
	}
}

// moveToSmallDisk moves the repository onto a 32 MB tmpfs of its own, so
// filling it makes every write in the repository fail with ENOSPC.
func (c *chaosRun) moveToSmallDisk() {
	t := c.t
	if os.Geteuid() != 0 {
		t.Skip("disk-full needs root to mount a small tmpfs")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=32m", "debussy-chaos", mnt).CombinedOutput(); err != nil {
		t.Skipf("disk-full: cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, out)
		}
	})
	repo := filepath.Join(mnt, "repo")
	if out, err := exec.Command("cp", "-a", c.h.Repo, repo).CombinedOutput(); err != nil {
		t.Fatalf("copy the repository to the small disk: %v %s", err, out)
	}
	c.h.Repo = repo
}
