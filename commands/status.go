package commands

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/state"
)

func (e *Env) statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the latest run: each phase's status, attempts, restarts, tokens, cost, commits",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the run record as JSON (includes stop latency and restart turnaround)"},
		},
		Action: func(c *cli.Context) error {
			return e.status(c.Bool("json"))
		},
	}
}

func (e *Env) status(asJSON bool) error {
	repo, root, err := e.findRepo()
	if err != nil {
		return err
	}
	store := state.New(filepath.Join(root, ".debussy"))
	l, err := store.Load()
	if err != nil {
		return err
	}
	run := l.Latest()
	if run == nil {
		if shown, err := e.gitStatus(repo, asJSON); shown || err != nil {
			return err
		}
		if asJSON {
			fmt.Fprintln(e.Stdout, "{}") // a valid object for jq, like a run's
			return nil
		}
		fmt.Fprintf(e.Stdout, "no runs yet in %s (start one with: debussy run MASTER_PLAN.md)\n", store.Dir)
		return nil
	}
	// A run recorded as running whose lock is free was killed; say what the
	// next run will record for it.
	stale, err := store.Stale(run)
	if err != nil {
		return err
	}
	e.mergeGit(repo, run)
	if asJSON {
		if stale {
			run.Status = state.StatusInterrupted
		}
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(run)
	}
	shown := string(run.Status) // a display string, not a Status
	if stale {
		shown = "interrupted (process gone; run again to resume)"
	}
	fmt.Fprintf(e.Stdout, "run %s  %s  started %s\nplan %s\n", run.ID, shown, run.StartedAt.Format("2006-01-02 15:04:05"), run.Plan)
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PHASE\tSTATUS\tATTEMPTS\tRESTARTS\tTOKENS\tCOST\tCOMMITS\tLAST ERROR")
	for _, p := range run.Phases {
		commits := make([]string, 0, len(p.Commits))
		for _, c := range p.Commits {
			commits = append(commits, gitcommit.Short(c))
		}
		status := string(p.Status)
		if e := p.Economics; p.Status == state.StatusRunning && !stale && e != nil && e.Progress != "" {
			status += " (" + e.Progress + ")" // what its agent is doing: exploring, planning, acting, verifying
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t$%.2f\t%s\t%s\n", p.ID, status, p.Attempts, p.Restarts, p.Tokens, p.CostUSD,
			strings.Join(commits, ","), oneLine(p.LastError, 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range run.Phases {
		if len(p.UncheckedGates) > 0 && p.Attempts > 0 { // phases that ran
			fmt.Fprintf(e.Stdout, "phase %s: UNCHECKED (no command, not run): %s\n", p.ID, strings.Join(p.UncheckedGates, ", "))
		}
	}
	// --parallel: where each phase works, and how it reached the user's branch.
	for _, p := range run.Phases {
		switch {
		case p.Merge != "":
			fmt.Fprintf(e.Stdout, "phase %s: merged from %s as %s\n", p.ID, p.Branch, gitcommit.Short(p.Merge))
		case p.Branch != "":
			fmt.Fprintf(e.Stdout, "phase %s: branch %s, worktree %s (not merged yet)\n", p.ID, p.Branch, p.Worktree)
		}
	}
	for _, p := range run.Phases {
		if line := budgetLine(p); line != "" {
			fmt.Fprintf(e.Stdout, "phase %s: %s\n", p.ID, line)
		}
	}
	// What each phase spent against its budget, and the run against the plan's.
	for _, p := range run.Phases {
		if line := orchestrator.SpendLine(p.Economics); line != "" {
			fmt.Fprintf(e.Stdout, "phase %s: %s\n", p.ID, line)
		}
	}
	if line := orchestrator.SpendLine(run.Economics); line != "" {
		fmt.Fprintf(e.Stdout, "run: %s\n", line)
	}
	return nil
}

// budgetLine says how the phase's sessions spent their budget: zones,
// handoffs, emergencies and nudges; "" when there is nothing to say.
func budgetLine(p *state.PhaseRecord) string {
	var parts []string
	if len(p.Zones) > 0 {
		parts = append(parts, "zones "+strings.Join(p.Zones, ","))
	}
	if n := len(p.Handoffs); n > 0 {
		parts = append(parts, plural(n, "handoff"))
	}
	if p.Emergencies > 0 {
		parts = append(parts, plural(p.Emergencies, "restart")+" without a handoff")
	}
	if len(p.Nudges) > 0 {
		kinds := map[string]int{}
		var order []string
		for _, n := range p.Nudges {
			if kinds[n.Kind] == 0 {
				order = append(order, n.Kind)
			}
			kinds[n.Kind]++
		}
		for _, k := range order {
			parts = append(parts, plural(kinds[k], strings.ReplaceAll(k, "_", " ")+" nudge"))
		}
	}
	return strings.Join(parts, ", ")
}

// oneLine shortens s to one line of at most n runes for tables.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
