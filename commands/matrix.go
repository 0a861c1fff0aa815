package commands

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/completion"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/secrets"
)

type matrixOptions struct {
	PlanPath   string
	ConfigFile string
	Remote     string // --remote: where usage-limit records are fetched from ("" when it has none)
}

func (e *Env) matrixCommand() *cli.Command {
	return &cli.Command{
		Name:      "matrix",
		Usage:     "print the phases ready to run now as a GitHub Actions matrix",
		ArgsUsage: "MASTER_PLAN.md",
		Description: `Prints, on one line of JSON for fromJSON, the phases that can run now:
  {"include":[{"phase":"2","title":"Endpoints"},{"phase":"3","title":"Docs"}]}
A phase is ready when it is not completed and every phase it depends on (transitively)
is. Completed means: marked so in the plan's table, or the latest debussy commit for the
phase reachable from HEAD says Debussy-Event: completed. Git is the ledger here, not
.debussy/, so every machine with the same commit prints the same matrix. Nothing ready
prints {"include":[]}.

The history must be complete: check out with fetch-depth: 0.

A workflow (full version: examples/github-actions-matrix.yml):
  jobs:
    plan:
      runs-on: ubuntu-latest
      outputs:
        matrix: ${{ steps.m.outputs.matrix }}
      steps:
        - uses: actions/checkout@v4
          with: { fetch-depth: 0 }
        - id: m
          run: echo "matrix=$(debussy matrix docs/plans/MASTER_PLAN.md)" >> "$GITHUB_OUTPUT"
    phase:
      needs: plan
      if: fromJSON(needs.plan.outputs.matrix).include[0] != null
      strategy:
        fail-fast: false
        matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}
      runs-on: ubuntu-latest
      steps:
        - uses: actions/checkout@v4
          with: { fetch-depth: 0 }
        - run: debussy run docs/plans/MASTER_PLAN.md --only ${{ matrix.phase }} --base deps --push origin
    collect:
      needs: [plan, phase]
      if: always() && needs.plan.outputs.matrix != '{"include":[]}'
      runs-on: ubuntu-latest
      steps:
        - uses: actions/checkout@v4
          with: { fetch-depth: 0 }
        - run: debussy collect docs/plans/MASTER_PLAN.md --from origin --push

debussy pipeline --format github prints the same; --format gitlab and k8s write what
GitLab and Kubernetes run.

A usage limit is the account's: when a phase's commit on the remote's debussy branches
(fetched from --remote, default origin) or in HEAD records one that has not reset
(Debussy-Usage-Limit: <kind>; resets=<RFC3339>), the matrix is printed as usual, stderr
says when the account resets, and every entry carries it as "not_before" (RFC 3339), e.g.
  {"include":[{"phase":"2","title":"Endpoints","not_before":"2026-11-27T19:00:00Z"}]}
so a workflow can read ${{ matrix.not_before }}; debussy run itself starts no session
before then (it waits within usage_limit_wait, else exits 75).

Exit codes: 0 printed (even an empty matrix), 2 bad usage, config or plan.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "config `FILE` (for gate_commands)"},
			&cli.StringFlag{Name: "remote", DefaultText: "origin", Usage: "fetch the usage limits other jobs recorded from `REMOTE`'s debussy/* branches (\"\": read only what is here)"},
		},
		Action: func(c *cli.Context) error {
			plan, err := oneArg(c, "MASTER_PLAN.md")
			if err != nil {
				return err
			}
			opts := matrixOptions{PlanPath: plan, ConfigFile: c.String("config"), Remote: c.String("remote")}
			if !c.IsSet("remote") {
				opts.Remote = "origin" // when the repository has it
			}
			return e.matrix(c.Context, opts)
		},
	}
}

// matrixEntry is one job of the matrix; the keys are what a workflow reads
// as matrix.phase and matrix.title.
type matrixEntry struct {
	Phase string `json:"phase"`
	Title string `json:"title"`
	// NotBefore is when the account's usage limit resets, if one recorded
	// in git is in force (RFC 3339).
	NotBefore string `json:"not_before,omitempty"`
}

func (e *Env) matrix(ctx context.Context, opts matrixOptions) error {
	ps, err := e.planState(opts.ConfigFile, opts.PlanPath)
	if err != nil {
		return err
	}
	ready, err := ps.ready()
	if err != nil {
		return err
	}
	notBefore := ""
	if len(ready) > 0 {
		if h, ok := e.holdAt(ctx, ps.ws.Root, opts.Remote); ok {
			notBefore = h.Resets.UTC().Format(time.RFC3339)
			fmt.Fprintf(e.Stderr, "debussy: %s\n", holdLine(h, time.Now()))
		}
	}
	return writeMatrix(e.Stdout, ready, notBefore)
}

// writeMatrix writes the phases as one line of GitHub Actions matrix JSON
// (one line: $GITHUB_OUTPUT takes name=value lines), each entry with
// notBefore when a usage limit holds.
func writeMatrix(w io.Writer, ready []*plans.Phase, notBefore string) error {
	out := struct {
		Include []matrixEntry `json:"include"`
	}{Include: []matrixEntry{}}
	for _, ph := range ready {
		out.Include = append(out.Include, matrixEntry{Phase: ph.ID, Title: secrets.Redact(ph.Title), NotBefore: notBefore})
	}
	if err := writeJSON(w, out, true); err != nil {
		return fmt.Errorf("encode matrix: %w", err)
	}
	return nil
}

// planState is a plan and what git's ledger (the commits reachable from
// HEAD) says of its phases: what matrix and pipeline read.
type planState struct {
	ws   *workspace
	plan *plans.Plan
	rel  string // the plan's Debussy-Plan path
	head string // HEAD's commit
	// done resolves from the plan's table and git alone: a job's clone
	// has no .debussy/, and what it has must not decide another's.
	done completion.Resolver
}

func (e *Env) planState(configFile, planPath string) (*planState, error) {
	ws, err := e.loadWorkspace(configFile, nil)
	if err != nil {
		return nil, err
	}
	if ws.Repo == nil {
		return nil, fmt.Errorf("%w: %s is not inside a git repository; the phases' state is read from git history", orchestrator.ErrSetup, ws.Root)
	}
	plan, err := e.loadPlan(ws, planPath)
	if err != nil {
		return nil, err
	}
	if err := plan.Err(); err != nil {
		for _, f := range plan.Errors() {
			fmt.Fprintln(e.Stderr, f.String())
		}
		return nil, &shownError{err}
	}
	l, err := ws.Repo.ReadLedger(context.Background(), orchestrator.PlanRel(ws.Root, plan.Path))
	if err != nil {
		return nil, fmt.Errorf("read git history: %w", err)
	}
	head, err := ws.Repo.Head()
	if err != nil {
		return nil, fmt.Errorf("read HEAD: %w", err)
	}
	rel := orchestrator.PlanRel(ws.Root, plan.Path)
	return &planState{ws: ws, plan: plan, rel: rel, head: head, done: completion.Resolver{Plan: plan, Git: l, PlanRel: rel}}, nil
}

// completed reports whether a phase is done: in git, or marked so in the
// plan's table.
func (s *planState) completed(id string) bool { return s.done.Done(id) }

// ready lists, in run order, the phases that can start now.
func (s *planState) ready() ([]*plans.Phase, error) { return s.plan.Ready(s.completed) }

// remaining lists, in run order, the phases not completed yet.
func (s *planState) remaining() ([]*plans.Phase, error) {
	order, err := s.plan.Order()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", plans.ErrInvalidPlan, err)
	}
	var out []*plans.Phase
	for _, ph := range order {
		if !s.completed(ph.ID) {
			out = append(out, ph)
		}
	}
	return out, nil
}
