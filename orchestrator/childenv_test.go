package orchestrator

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// debussy started with GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE (say, from
// a git alias or a hook) resolves its repository once; the agent's session
// and the gates in a linked phase worktree must not inherit them, or their
// git would work on the main repository and its index.
func TestSessionAndGatesDropRepoVariables(t *testing.T) {
	f := newFixture(t, script{})
	wt := filepath.Join(t.TempDir(), "wt")
	if out, err := exec.Command("git", "-C", f.root, "worktree", "add", "-q", "-b", "phase-1", wt).CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v\n%s", err, out)
	}
	linked, err := f.repo.OpenLinked(wt)
	if err != nil {
		t.Fatal(err)
	}
	r := econRun(t, config.Defaults())
	r.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GIT_DIR=" + filepath.Join(f.root, ".git"),
		"GIT_WORK_TREE=" + f.root, "GIT_INDEX_FILE=" + filepath.Join(f.root, ".git", "index")}
	r.Plan = &plans.Plan{Path: "plan.md"}
	p := r.newPhase(&plans.Phase{ID: "1"}, r.rec.NewPhase(&state.PhaseRecord{ID: "1"}), linked, nil)
	spec := p.launch.spec(p, 1, "prompt")
	for _, kv := range spec.Env {
		if k, _, _ := strings.Cut(kv, "="); k == "GIT_DIR" || k == "GIT_WORK_TREE" || k == "GIT_INDEX_FILE" {
			t.Errorf("session environment keeps %s", kv)
		}
	}
	res := gate.Run(context.Background(), wt, linked.ChildEnv(r.Env), plans.Gate{Name: "branch", Command: "git rev-parse --abbrev-ref HEAD"}, time.Minute)
	if got := strings.TrimSpace(res.Output); res.ExitCode != 0 || got != "phase-1" {
		t.Errorf("a gate's git in the phase worktree sees branch %q (exit %d), want phase-1", got, res.ExitCode)
	}
}
