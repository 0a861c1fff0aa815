package commands

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/remote"
	"github.com/debussy-dev/debussy/report"
	"github.com/debussy-dev/debussy/state"
)

func (e *Env) statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the latest run with sessions (--all: every run): each phase's status, attempts, restarts, tokens, cost, commits",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the run record as JSON (includes stop latency and restart turnaround)"},
			&cli.BoolFlag{Name: "all", Usage: "list every run, newest first"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr(c, "unexpected arguments: %s", strings.Join(c.Args().Slice(), " "))
			}
			if c.Bool("all") {
				return e.statusAll(c.Bool("json"))
			}
			return e.status(c.Context, c.Bool("json"))
		},
	}
}

func (e *Env) status(ctx context.Context, asJSON bool) error {
	repo, root, err := e.findRepo()
	if err != nil {
		return err
	}
	// The account's usage limit other jobs recorded (read offline: HEAD
	// and the debussy branches fetched before).
	var hold *remote.Hold
	if repo != nil {
		if h, ok := e.accountHold(ctx, root, ""); ok {
			hold = &h
		}
	}
	printHold := func() {
		if hold != nil && !asJSON {
			fmt.Fprintln(e.Stdout, "account: "+holdLine(*hold, time.Now()))
		}
	}
	store := state.New(filepath.Join(root, ".debussy"))
	l, err := store.Load()
	if err != nil {
		return err
	}
	run, later, err := shownRun(store, l)
	if err != nil {
		return err
	}
	if run == nil {
		if shown, err := e.gitStatus(repo, asJSON, hold); shown || err != nil {
			if err == nil {
				printHold()
			}
			return err
		}
		if asJSON {
			if hold != nil {
				return writeJSON(e.Stdout, struct {
					AccountHold *remote.Hold `json:"account_hold"`
				}{hold}, false)
			}
			fmt.Fprintln(e.Stdout, "{}") // a valid object for jq, like a run's
			return nil
		}
		fmt.Fprintf(e.Stdout, "no runs yet in %s (start one with: debussy run MASTER_PLAN.md)\n", store.Dir)
		printHold()
		return nil
	}
	// A run recorded as running whose lock is free was killed; say what the
	// next run will record for it.
	stale, err := store.Stale(run)
	if err != nil {
		return err
	}
	e.mergeGit(repo, run)
	gone := e.notOnBranch(repo, run)
	if asJSON {
		if stale {
			run.Status = state.StatusInterrupted
		}
		tot := report.TotalsOf(run)
		out := statusJSON{Run: run, NotOnBranch: gone, AccountHold: hold, Tokens: tot.RunTokens, CostUSD: tot.RunCostUSD,
			PlanTokens: tot.PlanTokens, PlanCostUSD: tot.PlanCostUSD}
		for _, p := range run.Phases {
			if p.Status == state.StatusBlocked {
				b := blockedJSON{Phase: p.ID, Question: p.Question, Command: orchestrator.AnswerCommand(p.ID)}
				if a := answerOf(store, run, p); a != nil {
					b.Answer = a.Text
				}
				out.Blocked = append(out.Blocked, b)
			}
		}
		if later != nil {
			out.LaterRun = later.ID
		}
		enc := jsonEncoder(e.Stdout)
		return enc.Encode(out)
	}
	shown := string(run.Status) // a display string, not a Status
	if stale {
		shown = "interrupted (process gone; run again to resume)"
	}
	fmt.Fprintf(e.Stdout, "run %s  %s  started %s\nplan %s\n", run.ID, shown, run.StartedAt.Format("2006-01-02 15:04:05"), run.Plan)
	if later != nil {
		fmt.Fprintln(e.Stdout, laterNote(run, later))
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	// The columns of the run's summary, in its order, then the last error.
	fmt.Fprintln(tw, "PHASE\tSTATUS\tSESSIONS\tRESTARTS\tATTEMPTS\tTOKENS\tCOST\tCOMMITS\tLAST ERROR")
	// A pipe or a CI log gets each error's structured words (its Reason),
	// not a gate's output (public's rule).
	full := public.TextShown(e.Stdout, e.Getenv, false)
	for _, p := range run.Phases {
		commits := make([]string, 0, len(p.Commits))
		for _, c := range p.Commits {
			commits = append(commits, gitcommit.Short(c))
		}
		status := string(p.Status)
		if slices.Contains(gone, p.ID) {
			status += " (not on this branch)"
		}
		if e := p.Economics; p.Status == state.StatusRunning && !stale && e != nil && e.Progress != "" {
			status += " (" + e.Progress + ")" // what its agent is doing: exploring, planning, acting, verifying
		}
		if w := p.WaitingUntil; !w.IsZero() && w.After(time.Now()) {
			// Waiting for a usage limit's reset, or stopped before it: a
			// rerun waits for it too.
			status += " (waiting until " + w.Local().Format("15:04") + ": usage limit)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t$%.2f\t%s\t%s\n", p.ID, status, p.Sessions, p.Restarts, p.Attempts, estimator.FormatTokens(p.Tokens), p.CostUSD,
			strings.Join(commits, ","), text.OneLine(lastError(p, full), 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range run.Phases {
		if len(p.UncheckedGates) > 0 && p.Attempts > 0 { // phases that ran
			fmt.Fprintf(e.Stdout, "phase %s: UNCHECKED (no command, not run): %s\n", p.ID, strings.Join(p.UncheckedGates, ", "))
		}
	}
	for _, line := range blockedLines(store, run) {
		fmt.Fprintln(e.Stdout, line)
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
	// One figure per meaning, labelled, as the run's summary and the
	// report say them: this run's, and the plan's across runs.
	for _, line := range report.TotalsOf(run).Lines() {
		fmt.Fprintln(e.Stdout, line)
	}
	// The table's figures are this run's; a resumed phase's across its runs
	// are labelled as such.
	for _, line := range report.AcrossRunsLines(run) {
		fmt.Fprintln(e.Stdout, line)
	}
	// What each phase spent against its budget (its runs' spend, as the
	// budget counts it), as the run's summary says it.
	for _, p := range run.Phases {
		if ec := p.Economics; ec != nil && ec.Limits != (state.Limits{}) {
			fmt.Fprintf(e.Stdout, "phase %s budget: %s\n", p.ID, report.SpendLine(ec))
		}
	}
	// The phases' spend across runs against the plan's budget: never
	// labelled "run", which is this run's alone.
	if ec := run.Economics; ec != nil && ec.Limits != (state.Limits{}) {
		fmt.Fprintf(e.Stdout, "plan budget: %s\n", report.SpendLine(ec))
	}
	printHold()
	return nil
}

// statusJSON is `status --json`: the run, and what the table says beside it.
type statusJSON struct {
	*state.Run
	// LaterRun is a later run that ran no session (shownRun).
	LaterRun string `json:"later_run_without_sessions,omitempty"`
	// NotOnBranch are the phases whose last commit HEAD no longer reaches.
	NotOnBranch []string `json:"phases_not_on_branch,omitempty"`
	// Tokens and CostUSD are this run's (the summary's "this run");
	// PlanTokens and PlanCostUSD every phase's across its runs.
	Tokens      int64   `json:"tokens"`
	CostUSD     float64 `json:"cost_usd"`
	PlanTokens  int64   `json:"plan_tokens"`
	PlanCostUSD float64 `json:"plan_cost_usd"`
	// AccountHold is the account's usage limit in force that git records
	// (a job's Debussy-Usage-Limit trailer): no session starts before it.
	AccountHold *remote.Hold `json:"account_hold,omitempty"`
	// Blocked are the blocked phases' questions and how to answer them.
	Blocked []blockedJSON `json:"blocked,omitempty"`
}

// blockedJSON is one blocked phase in `status --json`.
type blockedJSON struct {
	Phase    string `json:"phase"`
	Question string `json:"question,omitempty"`
	Command  string `json:"answer_command"`
	Answer   string `json:"answer,omitempty"` // recorded, not yet used by a run
}

// notOnBranch lists the run's phases whose last commit (or merge) is not
// reachable from HEAD: a reset discarded them, and a rerun does them again.
func (e *Env) notOnBranch(repo *gitcommit.Repo, run *state.Run) []string {
	if repo == nil {
		return nil
	}
	last := map[string]string{}
	var hashes []string
	for _, p := range run.Phases {
		h := p.Merge
		if n := len(p.Commits); h == "" && n > 0 {
			h = p.Commits[n-1]
		}
		if h != "" {
			last[p.ID] = h
			hashes = append(hashes, h)
		}
	}
	if len(hashes) == 0 {
		return nil
	}
	on, err := repo.Reachable(hashes...)
	if err != nil {
		fmt.Fprintf(e.Stderr, "debussy: %v\n", err)
		return nil
	}
	var gone []string
	for _, p := range run.Phases {
		if h, ok := last[p.ID]; ok && !on[h] {
			gone = append(gone, p.ID)
		}
	}
	return gone
}

// loadLedger finds the repository and reads its .debussy/ ledger.
func (e *Env) loadLedger() (root string, store *state.Store, l *state.Ledger, err error) {
	_, root, err = e.findRepo()
	if err != nil {
		return "", nil, nil, err
	}
	store = state.New(filepath.Join(root, state.DirName))
	l, err = store.Load()
	return root, store, l, err
}

// shownRun is the run status and logs show: the latest, unless it ran no
// session and has ended (a rerun of a finished plan skips every phase) —
// then the latest run that worked, with the later one to mention.
func shownRun(store *state.Store, l *state.Ledger) (run, later *state.Run, err error) {
	latest := l.Latest()
	if latest == nil || latest.Worked() {
		return latest, nil, nil
	}
	if latest.Status == state.StatusRunning {
		stale, err := store.Stale(latest)
		if err != nil || !stale {
			return latest, nil, err // a run starting now: it is the one to show
		}
	}
	worked := l.LatestWorked()
	if worked == nil {
		return latest, nil, nil
	}
	return worked, latest, nil
}

// laterNote says why run is shown rather than the later run.
func laterNote(run, later *state.Run) string {
	what := "ran no session (" + phaseCounts(later) + ")"
	if !slices.ContainsFunc(later.Phases, func(p *state.PhaseRecord) bool { return p.Status != state.StatusSkipped }) {
		what = "only skipped phases, done already"
	}
	return fmt.Sprintf("showing run %s, the latest with sessions; the later run %s (started %s) %s",
		run.ID, later.ID, later.StartedAt.Format("2006-01-02 15:04:05"), what)
}

// statusAll lists every run, newest first.
func (e *Env) statusAll(asJSON bool) error {
	root, store, l, err := e.loadLedger()
	if err != nil {
		return err
	}
	runs := l.NewestFirst()
	if asJSON {
		enc := jsonEncoder(e.Stdout)
		if runs == nil {
			runs = []*state.Run{} // [] for jq, not null
		}
		return enc.Encode(runs)
	}
	if len(runs) == 0 {
		fmt.Fprintf(e.Stdout, "no runs yet in %s (start one with: debussy run MASTER_PLAN.md)\n", store.Dir)
		return nil
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tSTARTED\tSESSIONS\tTOKENS\tCOST\tPHASES\tPLAN")
	for _, r := range runs {
		status := r.Status
		if stale, err := store.Stale(r); err == nil && stale {
			status = state.StatusInterrupted
		}
		sessions := 0
		for _, p := range r.Phases {
			sessions += p.Sessions
		}
		t := report.TotalsOf(r) // each run's own spend: a resumed phase's earlier runs are theirs
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t$%.2f\t%s\t%s\n", r.ID, status, r.StartedAt.Format("2006-01-02 15:04"),
			sessions, estimator.FormatTokens(t.RunTokens), t.RunCostUSD, phaseCounts(r), planShown(root, r.Plan))
	}
	return tw.Flush()
}

// planShown is a run's plan relative to the repository root.
func planShown(root, plan string) string {
	if !filepath.IsAbs(plan) {
		return filepath.ToSlash(plan)
	}
	return orchestrator.PlanRel(root, plan)
}

// phaseCounts is "2 completed, 1 skipped": the run's phases by status, in
// the order statuses first appear.
func phaseCounts(r *state.Run) string {
	n := map[state.Status]int{}
	var order []state.Status
	for _, p := range r.Phases {
		if n[p.Status] == 0 {
			order = append(order, p.Status)
		}
		n[p.Status]++
	}
	parts := make([]string, 0, len(order))
	for _, s := range order {
		parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
	}
	return strings.Join(parts, ", ")
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

// lastError is p's last error as status shows it: whole where full, else
// its structured words (public's rule; "" for a record without them).
func lastError(p *state.PhaseRecord, full bool) string {
	if full || p.LastError == "" {
		return p.LastError
	}
	return p.Reason
}
