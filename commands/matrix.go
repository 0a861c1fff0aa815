package commands

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/plans"
)

type matrixOptions struct {
	PlanPath   string
	ConfigFile string
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
        - run: debussy run docs/plans/MASTER_PLAN.md --only ${{ matrix.phase }}
        - run: git push origin "HEAD:refs/heads/debussy/phase-${{ matrix.phase }}"

Exit codes: 0 printed (even an empty matrix), 2 bad usage, config or plan.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "config `FILE` (for gate_commands)"},
		},
		Action: func(c *cli.Context) error {
			plan, err := oneArg(c, "MASTER_PLAN.md")
			if err != nil {
				return err
			}
			return e.matrix(matrixOptions{PlanPath: plan, ConfigFile: c.String("config")})
		},
	}
}

// matrixEntry is one job of the matrix; the keys are what a workflow reads
// as matrix.phase and matrix.title.
type matrixEntry struct {
	Phase string `json:"phase"`
	Title string `json:"title"`
}

func (e *Env) matrix(opts matrixOptions) error {
	ws, err := e.loadWorkspace(opts.ConfigFile, nil)
	if err != nil {
		return err
	}
	if ws.Repo == nil {
		return fmt.Errorf("%w: %s is not inside a git repository; the matrix is read from git history", orchestrator.ErrSetup, ws.Root)
	}
	plan, err := e.loadPlan(ws, opts.PlanPath)
	if err != nil {
		return err
	}
	if err := plan.Err(); err != nil {
		for _, f := range plan.Errors() {
			fmt.Fprintln(e.Stderr, f.String())
		}
		return &shownError{err}
	}
	l, err := ws.Repo.ReadLedger(context.Background(), orchestrator.PlanRel(ws.Root, plan.Path))
	if err != nil {
		return fmt.Errorf("read git history: %w", err)
	}
	inGit := orchestrator.GitCompleted(plan, l, orchestrator.PlanRel(ws.Root, plan.Path))
	ready, err := plan.Ready(func(id string) bool {
		_, ok := inGit[id]
		p := plan.Phase(id)
		return ok || (p != nil && p.Status == plans.StatusCompleted)
	})
	if err != nil {
		return err
	}
	out := struct {
		Include []matrixEntry `json:"include"`
	}{Include: []matrixEntry{}}
	for _, ph := range ready {
		out.Include = append(out.Include, matrixEntry{Phase: ph.ID, Title: ph.Title})
	}
	// One line: $GITHUB_OUTPUT takes name=value lines.
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("encode matrix: %w", err)
	}
	_, err = fmt.Fprintf(e.Stdout, "%s\n", b)
	return err
}
