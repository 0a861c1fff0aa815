package completion

import (
	"testing"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

const (
	planPath = "/repo/plan.md"
	planRel  = "plan.md"
)

// Every row of the precedence table, and the cases each source alone gets
// wrong.
func TestResolver(t *testing.T) {
	run := func(id string, status state.Status, commits ...string) *state.Run {
		return &state.Run{ID: id, Plan: planPath, Status: status,
			Phases: []*state.PhaseRecord{{ID: "1", Status: status, Commits: commits}}}
	}
	ledger := func(runs ...*state.Run) *state.Ledger { return &state.Ledger{Runs: runs} } // later entries are newer
	outcome := func(event, commit string) gitcommit.Outcome {
		return gitcommit.Outcome{Plan: planRel, Phase: "1", Event: event, Commit: commit, Run: "r-git"}
	}
	git := func(os ...gitcommit.Outcome) *gitcommit.Ledger { return &gitcommit.Ledger{Outcomes: os} } // newest first
	tests := []struct {
		name     string
		table    plans.Status
		ledger   *state.Ledger
		git      *gitcommit.Ledger
		gitKnows bool
		fresh    bool
		want     Source // None: not done
		commit   string
		why      string
	}{
		{name: "nothing recorded", want: None},
		{name: "the plan's table says completed", table: plans.StatusCompleted, git: git(outcome("failed", "f1")), gitKnows: true, want: Table,
			why: "completed in the plan's table"},
		{name: "--restart: only the table counts", ledger: ledger(run("r1", state.StatusCompleted, "c1")), git: git(outcome("completed", "c1")),
			gitKnows: true, fresh: true, want: None},
		{name: "--restart keeps the table", table: plans.StatusCompleted, fresh: true, want: Table},
		{name: "a clone without .debussy/", git: git(outcome("completed", "c1")), gitKnows: true, want: Git, commit: "c1",
			why: "completed at c1 (per git)"},
		{name: "a clone without .debussy/, failed last", git: git(outcome("failed", "f1"), outcome("completed", "c1")), gitKnows: true, want: None},
		{name: "ledger and git agree", ledger: ledger(run("r1", state.StatusCompleted, "c0", "c1")), git: git(outcome("completed", "c1")),
			gitKnows: true, want: Ledger, commit: "c1", why: "completed in run r1 at c1"},
		{name: "a reset took the completion's commit away", ledger: ledger(run("r1", state.StatusCompleted, "c1")), git: git(), gitKnows: true, want: None},
		{name: "a later failure in git (a --restart that failed)", ledger: ledger(run("r1", state.StatusCompleted, "c1")),
			git: git(outcome("failed", "f2"), outcome("completed", "c1")), gitKnows: true, want: None},
		{name: "git says completed, the ledger says failed", ledger: ledger(run("r1", state.StatusFailed, "f1")), git: git(outcome("completed", "c2")),
			gitKnows: true, want: Git, commit: "c2"},
		{name: "a dead run: the ledger says running, no lock", ledger: ledger(run("r1", state.StatusRunning, "c1")), gitKnows: true, git: git(), want: None},
		{name: "a dead run after a completion", ledger: ledger(run("r1", state.StatusCompleted, "c1"), run("r2", state.StatusRunning)),
			git: git(outcome("completed", "c1")), gitKnows: true, want: Ledger, commit: "c1"},
		{name: "git unread (no repository, auto_commit off): the ledger alone", ledger: ledger(run("r1", state.StatusCompleted, "c1")), want: Ledger, commit: "c1"},
		{name: "a completion that recorded no commit", ledger: ledger(run("r1", state.StatusCompleted)), git: git(), gitKnows: true, want: Ledger,
			why: "completed in run r1"},
		{name: "another plan's outcome", git: git(gitcommit.Outcome{Plan: "other.md", Phase: "1", Event: "completed", Commit: "x"}), gitKnows: true, want: None},
		{name: "an outcome from before Debussy-Plan matches any plan", git: git(gitcommit.Outcome{Phase: "1", Event: "completed", Commit: "x"}),
			gitKnows: true, want: Git, commit: "x"},
		{name: "another plan's run in the ledger", ledger: &state.Ledger{Runs: []*state.Run{{ID: "o", Plan: "/repo/other.md",
			Phases: []*state.PhaseRecord{{ID: "1", Status: state.StatusCompleted}}}}}, want: None},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := &plans.Plan{Path: planPath, Phases: []*plans.Phase{{ID: "1", Status: plans.StatusPending}}}
			if tt.table != "" {
				plan.Phases[0].Status = tt.table
			}
			r := Resolver{Plan: plan, Ledger: tt.ledger, PlanPath: planPath, Git: tt.git, PlanRel: planRel, GitKnows: tt.gitKnows, Fresh: tt.fresh}
			got := r.Phase("1")
			if got.Done != (tt.want != None) || got.Source != tt.want || got.Commit != tt.commit {
				t.Fatalf("Phase = %+v, want source %q commit %q", got, tt.want, tt.commit)
			}
			if tt.why != "" && got.Why != tt.why {
				t.Fatalf("Why = %q, want %q", got.Why, tt.why)
			}
			if r.Done("1") != got.Done {
				t.Fatal("Done disagrees with Phase")
			}
		})
	}
}
