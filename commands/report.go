package commands

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/history"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/report"
	"github.com/debussy-dev/debussy/spend"
	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/tune"
)

type reportOptions struct {
	Run  string
	HTML string // file to write; "" with MD false: .debussy/runs/<run>/report.html
	MD   bool   // markdown on stdout
}

func (e *Env) reportCommand() *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "draw a run: sessions on a timeline, context per turn, tokens and cost, tool calls, files changed",
		Description: `Writes one self-contained HTML page for a run (no script, nothing fetched): per phase a
timeline of its sessions and gates; each session's context per turn against the threshold,
with debussy's warnings, handoff requests, refusals, nudges, stops, restarts and the agent's
done signal marked on it; tokens and cost by kind (input, cache read, cache write, output)
against the budget; the tool calls of each session; and the files each session's commits
changed. --md prints the same as markdown with Mermaid charts (GitHub renders them).

Examples:
  debussy report                              # the latest run → .debussy/runs/<run>/report.html
  debussy report --html run.html              # somewhere else
  debussy report --run 20261121-2230-4f2c --md > run.md
  debussy report --from origin --md           # a run spread over CI jobs (run --push)`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "run", Usage: "run `ID` (default: the latest run with a session; debussy status shows ids)"},
			&cli.StringFlag{Name: "html", Usage: "write the HTML report to `FILE`", DefaultText: ".debussy/runs/<run>/report.html"},
			&cli.BoolFlag{Name: "md", Usage: "print markdown with Mermaid charts instead"},
			&cli.StringFlag{Name: "from", Usage: fromUsage},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr(c, "unexpected arguments: %s", strings.Join(c.Args().Slice(), " "))
			}
			if c.IsSet("html") && c.Bool("md") {
				return usageErr(c, "--html and --md: choose one")
			}
			opts := reportOptions{Run: c.String("run"), HTML: e.abs(c.String("html")), MD: c.Bool("md")}
			if from := c.String("from"); from != "" {
				if opts.Run != "" {
					return usageErr(c, "--from and --run: choose one")
				}
				return e.reportFrom(c.Context, from, opts)
			}
			return e.report(c.Context, opts)
		},
	}
}

func (e *Env) report(_ context.Context, opts reportOptions) error {
	repo, root, store, run, err := e.findRun(opts.Run, reportRun)
	if none := (*noRunsYet)(nil); errors.As(err, &none) {
		fmt.Fprintln(e.Stdout, none.Error())
		return nil
	}
	if err != nil {
		return err
	}
	cfg, _, cerr := config.Load(root, "", e.Environ())
	if cerr != nil {
		cfg = config.Defaults() // the report is of what was recorded; the config only fills gaps
	}
	in, err := loadReport(store, repo, run, cfg)
	if err != nil {
		return err
	}
	in.Tuning = runTuning(store.Dir, run.ID, cfg)
	rep := report.Build(in) // redacted
	if opts.MD {
		return report.Markdown(e.Stdout, rep)
	}
	path := opts.HTML
	if path == "" {
		path = filepath.Join(store.RunDir(run.ID), "report.html")
	}
	return e.writeHTML(path, rep)
}

// writeHTML writes rep's HTML page at path (private, as .debussy/ is)
// and prints the path.
func (e *Env) writeHTML(path string, rep *report.Report) error {
	var buf bytes.Buffer
	if err := report.HTML(&buf, rep); err != nil {
		return err
	}
	if err := state.WriteFile(path, buf.Bytes()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	fmt.Fprintln(e.Stdout, path)
	return nil
}

// findRun opens the repository's .debussy/ and returns the run named id,
// or pick's choice without one; no such run is a usage error.
func (e *Env) findRun(id string, pick func(*state.Ledger) *state.Run) (*gitcommit.Repo, string, *state.Store, *state.Run, error) {
	repo, root, err := e.findRepo()
	if err != nil {
		return nil, "", nil, nil, err
	}
	store := state.New(filepath.Join(root, state.DirName))
	l, err := store.Load()
	if err != nil {
		return nil, "", nil, nil, err
	}
	run := pick(l)
	if id != "" {
		if run = l.Run(id); run == nil {
			return nil, "", nil, nil, fmt.Errorf("%w: no run %q in %s (debussy status shows the latest)", ErrUsage, id, store.Dir)
		}
	}
	if run == nil {
		// Not an error: status, logs and report all answer exit 0.
		return nil, "", nil, nil, &noRunsYet{store.Dir}
	}
	return repo, root, store, run, nil
}

// reportRun is the latest run that ran a session: a rerun that only
// skipped finished phases has nothing to draw.
func reportRun(l *state.Ledger) *state.Run {
	if r := l.LatestWorked(); r != nil {
		return r
	}
	return l.Latest()
}

// loadReport reads what run recorded: its events, each session's stream,
// its signals and, from git, its commits. Missing pieces are left out (a
// run killed early has fewer); a stream or commit that cannot be read is
// an error.
func loadReport(store *state.Store, repo *gitcommit.Repo, run *state.Run, cfg config.Config) (report.Input, error) {
	events, err := state.ReadLog(store.EventsPath(run.ID))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return report.Input{}, err
	}
	return reportInput(store, repo, run, cfg, events)
}

// reportInput is loadReport's, from the run's events as read (export
// reads them its own way).
func reportInput(store *state.Store, repo *gitcommit.Repo, run *state.Run, cfg config.Config, events []record.Line) (report.Input, error) {
	in := report.Input{Run: run, PlanName: planTitle(run.Plan), Sessions: map[report.SessionKey]*report.Digest{},
		Signals: map[string]*state.Signal{}, Threshold: cfg.ContextThreshold, Window: int64(cfg.ContextWindow),
		MaxTokens: int64(cfg.ContextMaxTokens), Events: events}
	window := in.Window
	for _, l := range events {
		if ev, ok := record.As[record.RunStarted](l); ok {
			window = int64(ev.ContextWindow) // the run's, whatever the config says now
		}
	}
	prices := spend.Prices(cfg.Budget)
	for _, p := range run.Phases {
		if sig, err := store.ReadSignal(run.ID, p.ID); err == nil && sig != nil {
			in.Signals[p.ID] = sig
		}
		for n := 1; n <= p.Sessions; n++ {
			d := report.NewDigest(window, prices)
			path := filepath.Join(store.PhaseDir(run.ID, p.ID), fmt.Sprintf("session-%d.jsonl", n))
			if err := digestFile(path, d); err != nil {
				return in, err
			}
			in.Sessions[report.SessionKey{Phase: p.ID, N: n}] = d
		}
		if repo == nil {
			continue
		}
		hashes := p.Commits
		if p.Merge != "" {
			hashes = append(hashes[:len(hashes):len(hashes)], p.Merge)
		}
		for _, h := range hashes {
			c, err := repo.ReadCommit(h)
			if err != nil {
				// A commit gone from the repository (a reset and gc, another
				// clone): the report draws the rest.
				continue
			}
			in.Commits = append(in.Commits, c)
		}
	}
	return in, nil
}

// digestFile feeds a session's raw stream to d line by line.
func digestFile(path string, d *report.Digest) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read session log: %w", err)
	}
	defer f.Close()
	rd := bufio.NewReader(f)
	for {
		line, err := rd.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			d.Line(line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read session log %s: %w", path, err)
		}
	}
}

// planTitle is the master plan's first heading, else its file name.
func planTitle(path string) string {
	data, err := os.ReadFile(path)
	if err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if t, ok := strings.CutPrefix(strings.TrimSpace(l), "# "); ok {
				return strings.TrimSpace(t)
			}
		}
	}
	return filepath.Base(path)
}

// noRunsYet is a store without runs: status, logs and report say so and
// exit 0 alike (an answer, not a failure).
type noRunsYet struct{ dir string }

func (n *noRunsYet) Error() string {
	return fmt.Sprintf("no runs yet in %s (start one with: debussy run MASTER_PLAN.md)", n.dir)
}

// runTuning is `debussy tune` on one run's sessions, for its report: the
// default grid under the cost objective; nil when there is nothing to
// replay.
func runTuning(dir, runID string, cfg config.Config) *report.Tuning {
	res := history.Runs(dir, history.RunFilter{IDs: []string{runID}})
	if len(res.Streams) == 0 {
		return nil
	}
	rep, err := tune.Tune(res.Streams, tune.Options{Config: cfg})
	if err != nil {
		return nil
	}
	t := &report.Tuning{Evidence: rep.Evidence(), SelfCheck: rep.SelfCheckText(), Assumes: rep.Assumptions(),
		Recommended: rep.RecommendedText()}
	for _, c := range rep.Candidates {
		rec := rep.Recommended
		t.Rows = append(t.Rows, report.TuningRow{Threshold: c.ContextThreshold, Cap: c.ContextMaxTokens, MaxRestarts: c.MaxRestarts,
			// report.Kinds' order: input, cache read, cache write, output.
			CostByKind: [4]float64{c.CostByKind.Input, c.CostByKind.CacheRead, c.CostByKind.CacheWrite, c.CostByKind.Output},
			Cost:       c.CostUSD, Restarts: c.Restarts, OutOfRestarts: c.OutOfRestarts, Peak: c.PeakTokens, Current: c.Current,
			Recommended: rec != nil && rec.ContextThreshold == c.ContextThreshold && rec.ContextMaxTokens == c.ContextMaxTokens &&
				rec.MaxRestarts == c.MaxRestarts})
	}
	return t
}
