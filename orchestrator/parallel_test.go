package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// runEvent is one line of events.jsonl, with the fields these tests read.
type runEvent struct {
	Event string `json:"event"`
	Phase string `json:"phase"`
}

func (f *fixture) runEvents(runID string) []runEvent {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(f.store.Dir, "runs", runID, "events.jsonl"))
	if err != nil {
		f.t.Fatal(err)
	}
	var out []runEvent
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev runEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// index is the position of the first event named name for phase, -1 if none.
func index(evs []runEvent, name, phase string) int {
	return slices.IndexFunc(evs, func(e runEvent) bool { return e.Event == name && e.Phase == phase })
}

// readFile is a file of the user's work tree, "" when missing.
func (f *fixture) readFile(rel string) string {
	b, _ := os.ReadFile(filepath.Join(f.root, rel))
	return string(b)
}

// leftovers lists what a parallel run must not leave: linked worktrees,
// their directories and phase branches.
func (f *fixture) leftovers() []string {
	var out []string
	for _, dir := range []string{".git/worktrees", ".debussy/worktrees"} {
		ents, _ := os.ReadDir(filepath.Join(f.root, dir))
		for _, e := range ents {
			out = append(out, dir+"/"+e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(f.root, ".git/refs/heads/debussy")); err == nil {
		out = append(out, "refs/heads/debussy")
	}
	return out
}

// A checkout git would fail (a required filter without a smudge side) is
// refused before any phase starts, and nothing is left behind.
func TestParallelRefusesACheckoutGitWouldFail(t *testing.T) {
	f := newFixture(t, script{}, phaseSpec{id: "1"}, phaseSpec{id: "2"})
	f.write(".gitattributes", "*.x filter=x\n")
	f.write("a.x", "data\n")
	cfg, err := os.OpenFile(filepath.Join(f.root, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.WriteString("[filter \"x\"]\n\tclean = cat\n\trequired = true\n"); err != nil {
		t.Fatal(err)
	}
	cfg.Close()
	if _, err := f.repo.CommitAll(context.Background(), "a filtered file\n"); err != nil {
		t.Fatal(err)
	}
	f.cfg.Parallel = 2
	err = f.run(context.Background())
	if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "smudge filter x failed") {
		t.Fatalf("err = %v; want ErrSetup naming the filter", err)
	}
	if left := f.leftovers(); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// Two independent phases run at the same time in their own worktrees (each
// session waits for a mark the other leaves, so neither can finish alone);
// the phase that depends on both starts after both are merged and sees
// their files; the user's branch ends with all three merged, clean, with
// no worktree or branch left.
func TestParallelPhases(t *testing.T) {
	s := script{
		"1": {{"touch p1", "await p2", "writeas a.txt from one", "done", "result"}},
		"2": {{"touch p2", "await p1", "writeas b.txt from two", "done", "result"}},
		"3": {{"read a.txt", "read b.txt", "writeas c.txt from three", "done", "result"}},
	}
	f := newFixture(t, s, phaseSpec{id: "1"}, phaseSpec{id: "2"},
		phaseSpec{id: "3", deps: []string{"1", "2"}, gates: []plans.Gate{{Name: "both", Command: "test -f a.txt && test -f b.txt"}}})
	f.cfg.Parallel = 4
	f.write("mine.txt", "the user's own untracked file\n")
	if err := f.run(context.Background()); err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	run := f.lastRun()
	for _, p := range run.Phases {
		if p.Status != state.StatusCompleted || p.Merge == "" || p.Branch == "" {
			t.Fatalf("phase %s: %s, merge %q, branch %q", p.ID, p.Status, p.Merge, p.Branch)
		}
	}
	evs := f.runEvents(run.ID)
	// Both sessions started before either phase ended: they overlapped.
	for _, a := range []string{"1", "2"} {
		for _, b := range []string{"1", "2"} {
			if index(evs, "session_spawned", a) > index(evs, "phase_ended", b) {
				t.Fatalf("phase %s started after phase %s ended: %v", a, b, evs)
			}
		}
	}
	if start := index(evs, "phase_started", "3"); start < index(evs, "merge", "1") || start < index(evs, "merge", "2") {
		t.Fatalf("phase 3 started before both merges: %v", evs)
	}
	for rel, want := range map[string]string{"a.txt": "from one\n", "b.txt": "from two\n", "c.txt": "from three\n", "mine.txt": "the user's own untracked file\n"} {
		if got := f.readFile(rel); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	if slices.Contains(f.tracked(), "mine.txt") {
		t.Error("the user's untracked file was committed")
	}
	if f.dirty() {
		t.Error("tracked files left dirty")
	}
	if l := f.leftovers(); len(l) > 0 {
		t.Errorf("left behind: %v", l)
	}
	merges := 0
	for _, c := range f.commits() {
		if c.NumParents() == 2 {
			merges++
		}
	}
	if merges != 3 {
		t.Errorf("%d merge commits, want 3: %v", merges, f.commitSubjects())
	}
}

// Two parallel phases changing the same file: the second merge is refused,
// naming the phase and the file; the user's branch stays at the first
// merge, the refused phase's branch is kept and the phase is not completed.
func TestParallelConflict(t *testing.T) {
	s := script{
		"1": {{"touch p1", "await p2", "writeas shared.txt one", "done", "result"}},
		"2": {{"touch p2", "await p1", "writeas shared.txt two", "done", "result"}},
	}
	f := newFixture(t, s, phaseSpec{id: "1"}, phaseSpec{id: "2"})
	f.cfg.Parallel = 2
	err := f.run(context.Background())
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "shared.txt") {
		t.Fatalf("err = %v", err)
	}
	run := f.lastRun()
	var merged, refused *state.PhaseRecord
	for _, p := range run.Phases {
		if p.Merge != "" {
			merged = p
		} else {
			refused = p
		}
	}
	if merged == nil || refused == nil {
		t.Fatalf("want one merged and one refused phase: %+v", run.Phases)
	}
	if !strings.Contains(err.Error(), "phase "+refused.ID+" ") || !strings.Contains(err.Error(), refused.Branch) {
		t.Fatalf("err names neither the phase nor its branch: %v", err)
	}
	head, _ := f.repo.Head()
	if head != merged.Merge {
		t.Fatalf("HEAD = %s, want the first merge %s", head, merged.Merge)
	}
	want := map[string]string{"1": "one\n", "2": "two\n"}[merged.ID]
	if got := f.readFile("shared.txt"); got != want {
		t.Fatalf("shared.txt = %q, want %q", got, want)
	}
	if refused.Status != state.StatusFailed || run.Status != state.StatusFailed {
		t.Fatalf("refused phase %s, run %s", refused.Status, run.Status)
	}
	if tip, err := f.repo.BranchHead(refused.Branch); err != nil || tip == "" {
		t.Fatalf("the refused phase's branch is gone: %v", err)
	}
	if f.dirty() {
		t.Error("tracked files left dirty")
	}
}

// Ctrl-C with two phases in flight: each stops, its work committed to its
// branch; the rerun resumes both on their branches and merges them.
func TestParallelInterruptResume(t *testing.T) {
	s := script{
		"1": {{"writeas a.txt one", "touch p1", "block"}, {"done", "result"}},
		"2": {{"writeas b.txt two", "touch p2", "block"}, {"done", "result"}},
	}
	f := newFixture(t, s, phaseSpec{id: "1"}, phaseSpec{id: "2"})
	f.cfg.Parallel = 2
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Once both sessions are in their blocking tool.
		for _, m := range []string{"p1", "p2"} {
			for {
				if _, err := os.Stat(f.script + ".mark-" + m); err == nil {
					break
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		}
		cancel()
	}()
	if err := f.run(ctx); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("first run: %v\n%s", err, f.log)
	}
	first := f.lastRun()
	branches := map[string]string{}
	for _, p := range first.Phases {
		if p.Status != state.StatusInterrupted || p.Branch == "" {
			t.Fatalf("phase %s: %s on %q", p.ID, p.Status, p.Branch)
		}
		tip, err := f.repo.BranchHead(p.Branch)
		if err != nil || tip == "" {
			t.Fatalf("branch %s: %v", p.Branch, err)
		}
		branches[p.ID] = p.Branch
	}
	if f.readFile("a.txt") != "" || f.readFile("b.txt") != "" {
		t.Fatal("interrupted work reached the user's branch")
	}

	if err := f.run(context.Background()); err != nil {
		t.Fatalf("rerun: %v\n%s", err, f.log)
	}
	for _, p := range f.lastRun().Phases {
		if p.Status != state.StatusCompleted || p.Branch != branches[p.ID] {
			t.Fatalf("phase %s: %s on %q, want completed on %q", p.ID, p.Status, p.Branch, branches[p.ID])
		}
		if !strings.Contains(f.prompt(p.ID, 2), "stopped") {
			t.Errorf("phase %s's second session did not resume from a checkpoint", p.ID)
		}
	}
	if f.readFile("a.txt") != "one\n" || f.readFile("b.txt") != "two\n" {
		t.Fatalf("a.txt %q, b.txt %q", f.readFile("a.txt"), f.readFile("b.txt"))
	}
	if l := f.leftovers(); len(l) > 0 {
		t.Errorf("left behind: %v", l)
	}
}
