package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/collect"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/remote"
)

type collectOptions struct {
	PlanPath   string
	ConfigFile string
	From       string
	Into       string
	Push       bool
}

func (e *Env) collectCommand() *cli.Command {
	return &cli.Command{
		Name:      "collect",
		Usage:     "merge the completed phases' branches from a remote into one branch",
		ArgsUsage: "MASTER_PLAN.md --from REMOTE [--into BRANCH] [--push]",
		Description: `Fetches the plan's phase branches from REMOTE — debussy/<plan-id>/phase-<ID>, as
debussy run --only ID --push REMOTE pushes them — and merges, in plan order, every one
whose latest debussy commit for its phase says Debussy-Event: completed into the target
branch: the checked-out branch, or --into BRANCH (checked out, made at HEAD when it does
not exist: a CI checkout's HEAD is detached). The merge is git's (as --parallel merges);
a branch already in the target is skipped. Phases that failed or were blocked are listed
with the reason their branch records; a phase without a branch is "not run".

A conflict stops collect: that merge is aborted (the target keeps the merges before it),
the branch and files are named, nothing is pushed, no branch is deleted. --push pushes the
target to the branch of the same name on REMOTE; a push rejected because the remote moved
on is fetched, merged and tried again, never forced.

Phase branches are never deleted: the phases that depend on one merge it when they start
(--base deps). The jobs' run records (refs/debussy/records/, pushed by run --push) are
fetched and kept too: debussy status --from REMOTE and report --from REMOTE read them.

Exit codes: 0 every completed phase is merged and none failed or was blocked (phases not
run yet, still running or interrupted are listed and do not fail collect: a driver loop
collects between waves), 1 a merge conflicted, a phase failed or was blocked, or the push
failed, 2 bad usage, config or plan, or no git, no such remote, a detached HEAD without
--into.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "from", Usage: "the `REMOTE` the phase branches were pushed to (e.g. origin)"},
			&cli.StringFlag{Name: "into", Usage: "merge into `BRANCH` (checked out; made at HEAD when missing) instead of the checked-out branch"},
			&cli.BoolFlag{Name: "push", Usage: "push the result to the branch of the same name on the remote"},
			&cli.StringFlag{Name: "config", Usage: "config `FILE`"},
		},
		Action: func(c *cli.Context) error {
			plan, err := oneArg(c, "MASTER_PLAN.md")
			if err != nil {
				return err
			}
			if c.String("from") == "" {
				return fmt.Errorf("%w: collect needs --from REMOTE: the remote the phases pushed their branches to (e.g. --from origin)", ErrUsage)
			}
			return e.collect(c.Context, collectOptions{PlanPath: plan, ConfigFile: c.String("config"),
				From: c.String("from"), Into: c.String("into"), Push: c.Bool("push")})
		},
	}
}

func (e *Env) collect(ctx context.Context, opts collectOptions) error {
	ws, err := e.loadWorkspace(opts.ConfigFile, nil)
	if err != nil {
		return err
	}
	if ws.Repo == nil {
		return fmt.Errorf("%w: %s is not inside a git repository", orchestrator.ErrSetup, ws.Root)
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
	rel := orchestrator.PlanRel(ws.Root, plan.Path)
	res, err := collect.Collect(ctx, collect.Options{Repo: ws.Repo, Plan: plan, PlanRel: rel,
		Remote: opts.From, Into: opts.Into, Push: opts.Push})
	if res.Target != "" {
		e.printCollect(rel, opts, res)
	}
	if errors.Is(err, collect.ErrSetup) {
		return fmt.Errorf("%w: %w", orchestrator.ErrSetup, err)
	}
	return err
}

// printCollect shows every phase's state, in plan order.
func (e *Env) printCollect(rel string, opts collectOptions, res collect.Result) {
	fmt.Fprintf(e.Stdout, "collect %s from %s into %s\n", rel, opts.From, res.Target)
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	for _, p := range res.Phases {
		var what []string
		switch p.State {
		case collect.Merged:
			what = append(what, fmt.Sprintf("%s/%s as %s", opts.From, p.Branch, gitcommit.Short(p.Commit)))
		case collect.AlreadyMerged, collect.NotMerged:
			what = append(what, opts.From+"/"+p.Branch)
		case collect.Failed, collect.Blocked, collect.Conflict, collect.Interrupted, collect.Unfinished:
			if p.Reason != "" {
				what = append(what, p.Reason)
			}
			what = append(what, "branch "+opts.From+"/"+p.Branch+" kept")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", p.ID, p.Title, p.State, strings.Join(what, "; "))
	}
	_ = tw.Flush()
	for _, l := range strings.SplitAfter(table.String(), "\n") {
		fmt.Fprint(e.Stdout, strings.TrimRight(l, " \n")+strings.Repeat("\n", strings.Count(l, "\n")))
	}
	switch {
	case res.RecordsErr != nil:
		fmt.Fprintf(e.Stderr, "debussy: the jobs' run records were not kept: %v\n", res.RecordsErr)
	case res.Records > 0:
		fmt.Fprintf(e.Stdout, "kept the records of %s under %s%s/ (debussy status --from %s shows the run across its jobs)\n",
			plural(res.Records, "job"), remote.RecordsPrefix, plans.ID(rel), opts.From)
	}
	if res.Pushed {
		fmt.Fprintf(e.Stdout, "pushed %s to %s\n", res.Target, opts.From)
	}
}
