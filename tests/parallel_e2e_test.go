package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// rendezvous is a Bash command that leaves mark and waits (60 s at most)
// for other: two sessions running it can only get past it together.
func rendezvous(dir, mark, other string) string {
	// && : a mark that cannot be written (a boundary that does not let the
	// agent write dir) fails the tool at once instead of waiting a minute
	// for a mark the other phase cannot write either.
	return fmt.Sprintf("touch %s/%s && %s", dir, mark, awaitMark(dir, other, time.Minute))
}

// marksDirs are the directories marksDir made, per test: newHarness lets
// the agent's tools write them inside the boundary (sandbox_write).
var marksDirs sync.Map // *testing.T → []string

// marksDir is a directory outside the repository where a test's phases
// leave marks for each other (rendezvous), writable by the agent's tools
// inside the boundary of the harness the test makes next.
func marksDir(t *testing.T) string {
	dir := t.TempDir()
	old, _ := marksDirs.Load(t)
	dirs, _ := old.([]string)
	marksDirs.Store(t, append(dirs, dir))
	t.Cleanup(func() { marksDirs.Delete(t) })
	return dir
}

// awaitMark is a Bash command that waits (at most within) for dir/name to
// exist, and fails if it never does.
func awaitMark(dir, name string, within time.Duration) string {
	return fmt.Sprintf("for i in $(seq %d); do [ -e %s/%s ] && break; sleep 0.05; done; [ -e %s/%s ]",
		int(within/(50*time.Millisecond)), dir, name, dir, name)
}

// span is when a conversation's first and last API requests came.
func span(h *harness, conversation string) (first, last time.Time) {
	for _, r := range h.API.Requests() {
		if r.Conversation != conversation {
			continue
		}
		if first.IsZero() || r.At.Before(first) {
			first = r.At
		}
		if r.At.After(last) {
			last = r.At
		}
	}
	return first, last
}

// --parallel 2 with the real CLI: phases 1 and 2 are independent and run
// at the same time in their own worktrees (each waits in a tool for the
// other's mark, and the API saw each one's requests begin before the
// other's ended); phase 3 depends on both, starts after both and sees both
// outputs. Both changed a line of shared.txt, apart: the merges keep both.
// The user's branch is checked out at the end with a clean
// tracked tree, no worktree and no phase branch left.
func TestParallelPhasesE2E(t *testing.T) {
	claudetest.OncePerSuite(t, "parallel phases in worktrees and their merges")
	marks := marksDir(t)
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash(rendezvous(marks, "p1", "p2"))),
			turn(21000, fakeapi.Bash("printf 'one\\n' > a.txt && sed -i 's/^first = 1$/first = 2/' shared.txt")),
			turn(22000, done("1")),
			turn(23000, fakeapi.Text("Phase 1 done.")),
		}},
		{Name: "p2", Match: phaseMatch("2"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash(rendezvous(marks, "p2", "p1"))),
			turn(21000, fakeapi.Bash("printf 'two\\n' > b.txt && sed -i 's/^second = 1$/second = 2/' shared.txt")),
			turn(22000, done("2")),
			turn(23000, fakeapi.Text("Phase 2 done.")),
		}},
		{Name: "p3", Match: phaseMatch("3"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("cat a.txt b.txt > c.txt && debussy done --phase 3")),
			turn(21000, fakeapi.Text("Phase 3 done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{
		{ID: "1", Title: "One", Gates: []string{"a: `test -f a.txt`"}},
		{ID: "2", Title: "Two", Gates: []string{"b: `test -f b.txt`"}},
		{ID: "3", Title: "Both", Deps: []string{"1", "2"}, Gates: []string{"both: `grep -q one c.txt && grep -q two c.txt`"}},
	}, "")
	h.write("shared.txt", "first = 1\nmiddle\nsecond = 1\n")
	h.git("add", "shared.txt")
	h.git("commit", "-q", "-m", "shared")
	h.write("notes.txt", "the user's untracked notes\n")
	branch := h.git("symbolic-ref", "--short", "HEAD")

	r := h.run("run", "plan/MASTER_PLAN.md", "--parallel", "2")
	if r.Code != 0 {
		t.Fatalf("run: %s", r)
	}
	f1, l1 := span(h, "p1")
	f2, l2 := span(h, "p2")
	if f1.IsZero() || f2.IsZero() || !f1.Before(l2) || !f2.Before(l1) {
		t.Errorf("phases 1 and 2 did not overlap: p1 %s–%s, p2 %s–%s", f1, l1, f2, l2)
	}
	f3, _ := span(h, "p3")
	if !f3.After(l1) || !f3.After(l2) {
		t.Errorf("phase 3 began (%s) before phases 1 and 2 ended (%s, %s)", f3, l1, l2)
	}
	if got := h.git("show", "HEAD:c.txt"); got != "one\ntwo" {
		t.Errorf("c.txt = %q, want both outputs", got)
	}
	if got := h.git("show", "HEAD:shared.txt"); got != "first = 2\nmiddle\nsecond = 2" {
		t.Errorf("shared.txt = %q, want both phases' lines", got)
	}
	if got := h.git("symbolic-ref", "--short", "HEAD"); got != branch {
		t.Errorf("checked out %s, want %s", got, branch)
	}
	if st := h.git("status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("tracked tree not clean: %q", st)
	}
	if b, err := os.ReadFile(filepath.Join(h.Repo, "notes.txt")); err != nil || string(b) != "the user's untracked notes\n" {
		t.Errorf("the user's notes: %q, %v", b, err)
	}
	if wt := h.git("worktree", "list", "--porcelain"); strings.Count(wt, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", wt)
	}
	if br := h.git("branch", "--list", "debussy/*"); br != "" {
		t.Errorf("phase branches left: %s", br)
	}
	if merges := h.git("rev-list", "--merges", "--count", "HEAD"); merges != "3" {
		t.Errorf("%s merge commits, want 3", merges)
	}
	st := h.status()
	phases, _ := st["phases"].([]any)
	if len(phases) != 3 {
		t.Fatalf("status --json has %d phases, want 3: %v", len(phases), st)
	}
	for _, p := range phases {
		if m := p.(map[string]any); m["status"] != "completed" || m["merge"] == nil {
			t.Errorf("status --json: %v", m)
		}
	}
	h.noOrphans()
}

// Two parallel phases changing the same line of the same file: the second
// merge is refused — exit 1 naming the phase and the file — and the user's
// branch is as it was before that merge (the first phase merged, nothing of
// the second), with the refused phase's branch kept.
func TestParallelConflictE2E(t *testing.T) {
	claudetest.OncePerSuite(t, "a refused merge of parallel phases")
	script := twoParallelPhases(t,
		"sed -i 's/^version = 1$/version = 2/' shared.txt",
		"sed -i 's/^version = 1$/version = 3/' shared.txt")
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "One"}, {ID: "2", Title: "Two"}}, "")
	h.write("shared.txt", "name = x\nversion = 1\n")
	h.git("add", "shared.txt")
	h.git("commit", "-q", "-m", "shared")
	before := h.git("rev-parse", "HEAD")

	r := h.run("run", "plan/MASTER_PLAN.md", "--parallel", "2")
	if r.Code != 1 || !strings.Contains(r.Stderr, "shared.txt") || !strings.Contains(r.Stderr, "cannot be merged") {
		t.Fatalf("want exit 1 naming shared.txt: %s", r)
	}
	st := h.status()
	phases, _ := st["phases"].([]any)
	var merged, refused map[string]any
	for _, p := range phases {
		if m := p.(map[string]any); m["merge"] != nil {
			merged = m
		} else {
			refused = m
		}
	}
	if merged == nil || refused == nil || refused["status"] != "failed" {
		t.Fatalf("status --json: %v", phases)
	}
	if !strings.Contains(r.Stderr, fmt.Sprintf("phase %s cannot be merged", refused["id"])) {
		t.Errorf("the error does not name phase %s: %s", refused["id"], r.Stderr)
	}
	// The user's branch: the first merge on top of where it was, nothing of the refused phase.
	if head := h.git("rev-parse", "HEAD"); head != merged["merge"] {
		t.Errorf("HEAD %s, want the first merge %s", head, merged["merge"])
	}
	if parent := h.git("rev-parse", "HEAD^1"); parent != before {
		t.Errorf("HEAD^1 = %s, want %s", parent, before)
	}
	want := map[any]string{"1": "version = 2", "2": "version = 3"}[merged["id"]]
	if got := h.git("show", "HEAD:shared.txt"); !strings.Contains(got, want) {
		t.Errorf("shared.txt = %q, want %q", got, want)
	}
	if st := h.git("status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("tracked tree not clean: %q", st)
	}
	if b, _ := refused["branch"].(string); b == "" || h.git("branch", "--list", b) == "" {
		t.Errorf("the refused phase's branch %q is gone", b)
	}
	h.noOrphans()
}
