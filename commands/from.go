package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/debussy-dev/debussy/cijob"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/remote"
	"github.com/debussy-dev/debussy/report"
	"github.com/debussy-dev/debussy/state"
)

// status --from and report --from: a run spread over CI jobs, each of
// which pushed its record beside its branch (run --push): the records are
// fetched from the remote and read as one run per plan.

// fromRecords fetches every run record from (a remote's name, a URL or a
// path) and returns them by plan, in the order their plans were first
// run. Outside a repository they are fetched into a temporary one.
func (e *Env) fromRecords(ctx context.Context, from string) ([]*report.Across, error) {
	_, root, err := e.findRepo()
	if err != nil {
		return nil, err
	}
	dir := root
	if _, err := (remote.Remote{Dir: root}).Git(ctx, "rev-parse", "--git-dir"); err != nil {
		tmp, err := os.MkdirTemp("", "debussy-records-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if out, err := exec.CommandContext(ctx, "git", "init", "-q", "--bare", tmp).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%w: make a repository to fetch into: %v: %s", orchestrator.ErrSetup, err, out)
		}
		dir = tmp
	}
	rem := remote.Remote{Dir: dir, Name: from}
	if err := rem.FetchRecords(ctx); err != nil {
		return nil, fmt.Errorf("%w: %w", orchestrator.ErrSetup, err)
	}
	recs, err := rem.Records(ctx)
	if err != nil {
		return nil, err
	}
	byPlan := map[string][]report.JobRecord{}
	first := map[string]time.Time{}
	for _, r := range recs {
		var run state.Run
		if err := json.Unmarshal(r.Files[cijob.RecordRunFile], &run); err != nil {
			fmt.Fprintf(e.Stderr, "debussy: skipped the record %s: its %s cannot be read: %v\n", r.Ref, cijob.RecordRunFile, err)
			continue
		}
		j := report.JobRecord{Plan: r.Plan, Phase: r.Phase, Run: &run}
		for _, line := range bytes.Split(r.Files[cijob.RecordEventsFile], []byte("\n")) {
			if l, err := record.Parse(line); err == nil {
				j.Events = append(j.Events, l)
			}
		}
		byPlan[r.Plan] = append(byPlan[r.Plan], j)
		if t, ok := first[r.Plan]; !ok || run.StartedAt.Before(t) {
			first[r.Plan] = run.StartedAt
		}
	}
	var out []*report.Across
	for plan, jobs := range byPlan {
		out = append(out, report.AcrossJobs(plan, jobs))
	}
	slices.SortFunc(out, func(a, b *report.Across) int { return first[a.Plan].Compare(first[b.Plan]) })
	return out, nil
}

// statusFrom prints each plan's run across its jobs: every phase's
// status, the jobs that ran it, sessions, restarts, tokens, cost, why it
// did not complete, and the usage limits the jobs met.
func (e *Env) statusFrom(ctx context.Context, from string, asJSON bool) error {
	plans, err := e.fromRecords(ctx, from)
	if err != nil {
		return err
	}
	if asJSON {
		out := []acrossJSON{}
		for _, a := range plans {
			out = append(out, acrossOf(a))
		}
		return writeJSON(e.Stdout, out, false)
	}
	if len(plans) == 0 {
		fmt.Fprintf(e.Stdout, "no run records on %s (jobs push them with debussy run --push)\n", from)
		return nil
	}
	for i, a := range plans {
		if i > 0 {
			fmt.Fprintln(e.Stdout)
		}
		e.printAcross(from, a)
	}
	return nil
}

func (e *Env) printAcross(from string, a *report.Across) {
	jobs := 0
	for _, p := range a.Phases {
		jobs += len(p.Jobs)
	}
	name := a.Name
	if name == "" {
		name = a.Plan
	}
	fmt.Fprintf(e.Stdout, "plan %s (%s) on %s: %s, %s\n", name, a.Plan, from, a.Status(), plural(jobs, "job"))
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PHASE\tSTATUS\tJOBS\tSESSIONS\tRESTARTS\tTOKENS\tCOST\tLAST RUN\tREASON")
	var tokens int64
	var cost float64
	sessions, restarts := 0, 0
	for _, p := range a.Phases {
		last := p.Last()
		if last == nil {
			fmt.Fprintf(tw, "%s\tnot run\t0\t0\t0\t-\t-\t-\t\n", p.ID)
			continue
		}
		run := p.Jobs[len(p.Jobs)-1].Run.ID
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t$%.2f\t%s\t%s\n", p.ID, last.Status, len(p.Jobs), p.Sessions(), p.Restarts(),
			estimator.FormatTokens(p.Tokens()), p.CostUSD(), run, text.OneLine(last.Reason, 80))
		tokens, cost, sessions, restarts = tokens+p.Tokens(), cost+p.CostUSD(), sessions+p.Sessions(), restarts+p.Restarts()
	}
	_ = tw.Flush()
	for _, line := range holdLines(a) {
		fmt.Fprintln(e.Stdout, line)
	}
	fmt.Fprintf(e.Stdout, "across its jobs: %s, %s, %s tokens, $%.2f\n", plural(sessions, "session"), plural(restarts, "restart"),
		estimator.FormatTokens(tokens), cost)
}

// holdLines say the usage limits the jobs met: waited out, or where a job
// stopped (exit 75) until the reset.
func holdLines(a *report.Across) []string {
	var out []string
	for _, p := range a.Phases {
		for _, j := range p.Jobs {
			for _, l := range j.Events {
				ev, ok := record.As[record.UsageLimit](l)
				if !ok {
					continue
				}
				what := "stopped until the reset (exit 75)"
				if ev.Waiting {
					what = "waited for the reset"
				}
				out = append(out, fmt.Sprintf("phase %s: job %s met the %s limit (resets %s): %s", p.ID, j.Run.ID,
					failure.LimitName(ev.Limit), ev.Resets.Local().Format("2006-01-02 15:04"), what))
			}
		}
	}
	return out
}

// acrossJSON is status --from --json: one plan's run across its jobs.
type acrossJSON struct {
	Plan     string            `json:"plan"`
	Name     string            `json:"name,omitempty"`
	Status   state.Status      `json:"status"`
	Phases   []acrossPhaseJSON `json:"phases"`
	Sessions int               `json:"sessions"`
	Restarts int               `json:"restarts"`
	Tokens   int64             `json:"tokens"`
	CostUSD  float64           `json:"cost_usd"`
}

type acrossPhaseJSON struct {
	ID       string              `json:"id"`
	Title    string              `json:"title,omitempty"`
	Status   state.Status        `json:"status"`
	Sessions int                 `json:"sessions"`
	Restarts int                 `json:"restarts"`
	Tokens   int64               `json:"tokens"`
	CostUSD  float64             `json:"cost_usd"`
	Jobs     []acrossJobJSON     `json:"jobs"`
	Limits   []record.UsageLimit `json:"usage_limits,omitempty"`
}

type acrossJobJSON struct {
	Run      string       `json:"run"`
	Status   state.Status `json:"status"` // the job's record of the phase
	ExitCode int          `json:"exit_code"`
	Sessions int          `json:"sessions"`
	Restarts int          `json:"restarts"`
	Attempts int          `json:"attempts"`
	Tokens   int64        `json:"tokens"`
	CostUSD  float64      `json:"cost_usd"`
	Reason   string       `json:"reason,omitempty"`
	Started  time.Time    `json:"started_at"`
	Ended    time.Time    `json:"ended_at,omitzero"`
}

func acrossOf(a *report.Across) acrossJSON {
	out := acrossJSON{Plan: a.Plan, Name: a.Name, Status: a.Status(), Phases: []acrossPhaseJSON{}}
	for _, p := range a.Phases {
		pj := acrossPhaseJSON{ID: p.ID, Title: p.Title, Status: "not run", Sessions: p.Sessions(), Restarts: p.Restarts(),
			Tokens: p.Tokens(), CostUSD: p.CostUSD(), Jobs: []acrossJobJSON{}}
		if last := p.Last(); last != nil {
			pj.Status = last.Status
		}
		for _, j := range p.Jobs {
			r := j.Record()
			pj.Jobs = append(pj.Jobs, acrossJobJSON{Run: j.Run.ID, Status: r.Status, ExitCode: j.Run.ExitCode, Sessions: r.Sessions,
				Restarts: r.Restarts, Attempts: r.Attempts, Tokens: r.Tokens, CostUSD: r.CostUSD, Reason: r.Reason,
				Started: j.Run.StartedAt, Ended: j.Run.EndedAt})
			for _, l := range j.Events {
				if ev, ok := record.As[record.UsageLimit](l); ok {
					pj.Limits = append(pj.Limits, ev)
				}
			}
		}
		out.Sessions, out.Restarts, out.Tokens, out.CostUSD = out.Sessions+pj.Sessions, out.Restarts+pj.Restarts,
			out.Tokens+pj.Tokens, out.CostUSD+pj.CostUSD
		out.Phases = append(out.Phases, pj)
	}
	return out
}

// reportFrom draws each plan's run across its jobs: markdown on stdout
// (md), else one HTML page per plan, .debussy/from/<plan-id>.html or path.
func (e *Env) reportFrom(ctx context.Context, from string, opts reportOptions) error {
	plans, err := e.fromRecords(ctx, from)
	if err != nil {
		return err
	}
	if len(plans) == 0 {
		fmt.Fprintf(e.Stdout, "no run records on %s (jobs push them with debussy run --push)\n", from)
		return nil
	}
	_, root, err := e.findRepo()
	if err != nil {
		return err
	}
	for _, a := range plans {
		run, events := a.Run()
		rep := report.Build(report.Input{Run: run, PlanName: a.Name, Events: events, Sessions: map[report.SessionKey]*report.Digest{},
			Signals: map[string]*state.Signal{}})
		if opts.MD {
			if err := report.Markdown(e.Stdout, rep); err != nil {
				return err
			}
			continue
		}
		path := opts.HTML
		if path == "" || len(plans) > 1 {
			path = filepath.Join(root, state.DirName, "from", a.Plan+".html")
		}
		if err := e.writeHTML(path, rep); err != nil {
			return err
		}
	}
	return nil
}

// fromUsage is status's and report's --from.
const fromUsage = "read the run records the CI jobs pushed to `REMOTE` (a remote's name, a URL or a path): the whole run across its jobs"
