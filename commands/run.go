package commands

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/report"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/state"
)

// runOptions is everything `debussy run` needs, parsed from flags.
type runOptions struct {
	PlanPath   string
	ConfigFile string
	Phase      string
	Only       string // --only: exactly this phase (a CI matrix job)
	DryRun     bool
	Restart    bool
	FailFast   bool   // --fail-fast: a failed phase stops the other running ones
	Base       string // --base deps: merge the --only phase's dependencies' branches first ("" or HEAD: no merge)
	Push       string // --push REMOTE: push the phase's branch after every commit
	Answer     string // --answer: the blocked phase's answer (answer.go)
	// ResumeBlocked (--resume-blocked) resumes a blocked phase nobody
	// answered; without it the phase stays blocked and starts no session.
	ResumeBlocked bool
	// set applies the flags the user gave on top of file and env config.
	set func(*config.Config)
}

func (e *Env) runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a master plan's phases through claude",
		ArgsUsage: "MASTER_PLAN.md",
		Description: `Runs the plan's phases in dependency order, each as a claude session. Phases the
table, an earlier run or git history (a debussy commit reachable from HEAD) marked
completed are skipped; an interrupted phase resumes
from a checkpoint. Flags may come before or after the plan path.

Settings come from defaults < .debussy.yaml < DEBUSSY_<KEY> env < flags
('debussy config example' prints every key with its meaning).

Examples:
  debussy run docs/plans/MASTER_PLAN.md
  debussy run MASTER_PLAN.md --context-threshold 90 --max-restarts 5
  debussy run MASTER_PLAN.md --phase 3 --dry-run
  debussy run MASTER_PLAN.md --only 2      # one job of a CI matrix (see debussy matrix --help)
  debussy run MASTER_PLAN.md --only 2 --base deps --push origin   # one job of any CI engine

A phase as a CI job (--base deps, --push REMOTE): each phase's result lives on the branch
  debussy/<plan-id>/phase-<ID>
where <plan-id> is the plan's path from the repository root without its extension,
lowercased, other characters as '-' (docs/plans/MASTER_PLAN.md → docs-plans-master-plan).
--push REMOTE pushes HEAD to that branch after every commit debussy makes for the phase
(restart, usage limit, interrupt, outcome); a push rejected because another push moved the
branch on is fetched, merged and pushed again, never forced. At the start it fetches the
remote's debussy/* branches: the phase's own branch, if it holds work HEAD lacks, is merged (a rerun
goes on where the last job stopped; a completed phase is skipped), and commits of the
phase HEAD has and the remote lacks (a job killed between commit and push) are pushed
first. A push that still fails at the end fails the run (exit 1); the commits stay in
the local branch and the same command pushes them first. After Ctrl-C the interrupt's
commit is still pushed, for at most 15 s (a second Ctrl-C cuts it). With --push or
--base, phases run one by one in your work tree (--parallel does not apply).
--base deps (with --only) fetches the branches of the phase's direct dependencies from
the --push remote (else origin) and merges them into HEAD before the first session, as
--parallel merges. A dependency whose branch is missing, or whose latest outcome there
is not completed, is exit 2; a conflict is exit 1 naming the files, with HEAD as it was
and nothing pushed. --base HEAD (the default) merges nothing.
A usage limit met by any job is recorded in its pushed commit (Debussy-Usage-Limit:
<kind>; resets=<RFC3339>); run reads the newest one reachable from HEAD and the remote's
debussy branches and starts no session before that reset (see --usage-limit-wait).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "config `FILE` (default: .debussy.yaml at the repository root)"},
			&cli.StringFlag{Name: "phase", Usage: "start at phase `ID` (its unfinished dependencies are an error)"},
			&cli.StringFlag{Name: "only", Usage: "run exactly phase `ID`, e.g. one job of a `debussy matrix` (its unfinished dependencies are an error)"},
			&cli.StringFlag{Name: "base", DefaultText: "HEAD", Usage: "what the --only phase starts from, `BASE`: deps merges its dependencies' branches debussy/<plan-id>/phase-<ID> from the remote first; HEAD merges nothing"},
			&cli.StringFlag{Name: "push", Usage: "push the phase's branch debussy/<plan-id>/phase-<ID> to `REMOTE` after every commit (never forced)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the phases in run order, their gates and the resolved config; start nothing"},
			&cli.BoolFlag{Name: "restart", Usage: "ignore earlier runs: run every phase not completed in the plan's table"},
			&cli.IntFlag{Name: "context-threshold", DefaultText: "80", Usage: "restart when context reaches `PERCENT` of the window (100 disables)"},
			&cli.IntFlag{Name: "tool-call-threshold", DefaultText: "0", Usage: "restart after `N` main-thread tool calls (0: the exact token count decides; 150 calls only when the stream reports no usage)"},
			&cli.IntFlag{Name: "max-restarts", DefaultText: "3", Usage: "context restarts allowed per phase attempt, `N` (0 disables restarts)"},
			&cli.IntFlag{Name: "max-retries", DefaultText: "2", Usage: "remediation sessions after a failed gate or missing done signal, `N`"},
			&cli.IntFlag{Name: "context-window", DefaultText: "0", Usage: "context window in `TOKENS` (0 detects it from the model)"},
			&cli.IntFlag{Name: "context-max-tokens", DefaultText: "400000", Usage: "hand off at `TOKENS` of context whatever the window, or at context-threshold if lower (0: off; env DEBUSSY_CONTEXT_MAX_TOKENS)"},
			&cli.StringFlag{Name: "model", Usage: "claude `MODEL` (default: the CLI's own default)"},
			&cli.StringFlag{Name: "claude-bin", DefaultText: "claude", Usage: "path of the claude `BINARY` (env DEBUSSY_CLAUDE_BIN)"},
			&cli.StringFlag{Name: "permission-mode", DefaultText: "bypassPermissions", Usage: "`MODE`: bypassPermissions, acceptEdits, default or plan"},
			&cli.BoolFlag{Name: "auto-commit", DefaultText: "on", Usage: "commit work at checkpoints and phase ends"},
			&cli.BoolFlag{Name: "no-auto-commit", Usage: "do not commit; work stays in the tree"},
			&cli.BoolFlag{Name: "strict-gates", Usage: "refuse a gate with no command, no preset and no gate_commands entry (strict_gates)"},
			&cli.BoolFlag{Name: "allow-dirty", Usage: "start even with uncommitted changes to tracked files"},
			&cli.IntFlag{Name: "parallel", DefaultText: "1", Usage: "run up to `N` phases at once, each in its own git worktree, merged into your branch (parallel)"},
			&cli.BoolFlag{Name: "fail-fast", Usage: "with --parallel: once a phase fails, stop the others at a safe point (work committed, resumed by a rerun) instead of letting them finish"},
			&cli.Float64Flag{Name: "budget-cost", DefaultText: "0", Usage: "stop a phase once it has cost `USD` (budget.phase.cost_usd; 0 is no limit)"},
			&cli.Int64Flag{Name: "budget-tokens", DefaultText: "0", Usage: "stop a phase once it has processed `N` tokens (budget.phase.tokens; 0 is no limit)"},
			&cli.DurationFlag{Name: "idle-timeout", DefaultText: "10m", Usage: "stop a session silent for this `DURATION`"},
			&cli.DurationFlag{Name: "session-timeout", DefaultText: "2h", Usage: "stop a session after this `DURATION`"},
			&cli.DurationFlag{Name: "usage-limit-wait", DefaultText: "6h", Usage: "wait up to this `DURATION` for a subscription's usage limit to reset, then go on (0: end at once with exit 75; env DEBUSSY_USAGE_LIMIT_WAIT)"},
			&cli.StringFlag{Name: "log-format", DefaultText: "text", Usage: "`FORMAT`: text, or json for one JSON object per line on stderr (env DEBUSSY_LOG_FORMAT)"},
			&cli.BoolFlag{Name: "log-text", Usage: "let the log carry the agent's and its tools' text (tool inputs, gate output, errors) also where stderr is not a terminal or CI=true; by default such a log carries structure only (log_text, env DEBUSSY_LOG_TEXT)"},
			&cli.BoolFlag{Name: "verbose", Usage: "also log debug records: the stop timeline, commit details, claude's command line (log_level: debug, env DEBUSSY_LOG_LEVEL=debug)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "log only warnings and errors (log_level: warn); the summary still goes to stdout"},
			&cli.StringFlag{Name: "answer", Usage: "answer the blocked phase's question (the only blocked one, or --only's) with `TEXT` and resume it (see debussy answer)"},
			&cli.BoolFlag{Name: "resume-blocked", Usage: "resume a blocked phase nobody answered (without it, the phase stays blocked and starts no session until debussy answer)"},
			sandboxFlag(),
			&cli.StringFlag{Name: "notify", Usage: "also POST the run's notifications (end, blocked phase, usage limit) as JSON to this webhook `URL` (notify: in .debussy.yaml for more)"},
		},
		Action: func(c *cli.Context) error {
			plan, err := oneArg(c, "MASTER_PLAN.md")
			if err != nil {
				return err
			}
			if c.Bool("auto-commit") && c.Bool("no-auto-commit") {
				return usageErr(c, "--auto-commit and --no-auto-commit contradict each other")
			}
			if c.IsSet("only") && c.IsSet("phase") {
				return usageErr(c, "--only and --phase contradict each other: --only runs one phase, --phase that phase and the ones after it")
			}
			if c.Bool("verbose") && c.Bool("quiet") {
				return usageErr(c, "--verbose and --quiet contradict each other")
			}
			base := c.String("base")
			switch base {
			case "", "HEAD":
				base = ""
			case orchestrator.BaseDeps:
				if !c.IsSet("only") {
					return usageErr(c, "--base deps needs --only ID: it merges that phase's dependencies")
				}
			default:
				return usageErr(c, "--base %q: want deps or HEAD", base)
			}
			if c.IsSet("push") && strings.TrimSpace(c.String("push")) == "" {
				return usageErr(c, "--push needs a REMOTE, e.g. --push origin")
			}
			opts := runOptions{
				PlanPath:   plan,
				ConfigFile: c.String("config"),
				Phase:      c.String("phase"),
				Only:       c.String("only"),
				DryRun:     c.Bool("dry-run"),
				Restart:    c.Bool("restart"),
				FailFast:   c.Bool("fail-fast"),
				Base:       base,
				Push:       c.String("push"),
				Answer:     strings.TrimSpace(c.String("answer")),
				set:        flagSetter(c),
			}
			opts.ResumeBlocked = c.Bool("resume-blocked")
			return e.run(c.Context, opts)
		},
	}
}

// flagSetter returns a function applying only the flags the user set.
func flagSetter(c *cli.Context) func(*config.Config) {
	return func(cfg *config.Config) {
		for name, p := range cfg.IntFlags() {
			if c.IsSet(name) {
				*p = c.Int(name)
			}
		}
		if c.IsSet("context-window") {
			cfg.ContextWindow = c.Int("context-window")
		}
		strs := map[string]*string{
			"model":           &cfg.Model,
			"claude-bin":      &cfg.ClaudeBin,
			"permission-mode": &cfg.PermissionMode,
			"log-format":      &cfg.LogFormat,
			"sandbox":         &cfg.Sandbox,
		}
		for name, p := range strs {
			if c.IsSet(name) {
				*p = c.String(name)
			}
		}
		if c.IsSet("auto-commit") {
			cfg.AutoCommit = true
		}
		if c.IsSet("no-auto-commit") {
			cfg.AutoCommit = false
		}
		if c.IsSet("strict-gates") {
			cfg.StrictGates = c.Bool("strict-gates")
		}
		if c.IsSet("allow-dirty") {
			cfg.AllowDirty = c.Bool("allow-dirty")
		}
		if c.IsSet("log-text") {
			cfg.LogText = c.Bool("log-text")
		}
		if c.IsSet("budget-cost") {
			cfg.Budget.Phase.CostUSD = c.Float64("budget-cost")
		}
		if c.IsSet("budget-tokens") {
			cfg.Budget.Phase.Tokens = c.Int64("budget-tokens")
		}
		if c.IsSet("idle-timeout") {
			cfg.IdleTimeout = config.Duration(c.Duration("idle-timeout"))
		}
		if c.IsSet("session-timeout") {
			cfg.SessionTimeout = config.Duration(c.Duration("session-timeout"))
		}
		if c.IsSet("usage-limit-wait") {
			cfg.UsageLimitWait = config.Duration(c.Duration("usage-limit-wait"))
		}
		if c.Bool("verbose") {
			cfg.LogLevel = config.LevelDebug
		}
		if c.Bool("quiet") {
			cfg.LogLevel = config.LevelWarn
		}
		if c.IsSet("notify") {
			cfg.Notify = append(cfg.Notify, config.Notify{Kind: config.NotifyWebhook, URL: c.String("notify")})
		}
	}
}

func (e *Env) run(ctx context.Context, opts runOptions) error {
	ws, err := e.loadWorkspace(opts.ConfigFile, opts.set)
	if err != nil {
		return err
	}
	logger := newLogger(e.Stderr, ws.Config.LogFormat, ws.Config.LogLevel, public.TextShown(e.Stderr, e.Getenv, ws.Config.LogText))
	e.logger, e.jsonLogs = logger, ws.Config.LogFormat == config.LogJSON
	logger.Debug("config resolved", "root", ws.Root, "file", ws.Source.File, "env", ws.Source.Env)
	plan, err := e.loadPlan(ws, opts.PlanPath)
	if err != nil {
		return err
	}
	for _, f := range plan.Findings {
		at := f.File
		if f.Line > 0 {
			at += ":" + strconv.Itoa(f.Line)
		}
		if f.Severity == plans.SeverityError {
			logger.Error("plan error", "at", at, "problem", public.Own(f.Message), "code", f.Code)
		} else {
			logger.Warn("plan warning", "at", at, "problem", public.Own(f.Message), "code", f.Code)
		}
	}
	if perr := plan.Err(); perr != nil {
		logger.Error("plan has errors; fix them (debussy check lists them)", "plan", opts.PlanPath, "errors", len(plan.Errors()))
		return &shownError{perr}
	}
	if !opts.DryRun {
		for _, n := range ws.Source.Notes {
			logger.Warn("config note", "note", public.Own(n))
		}
	}
	// Opened again now that the logger exists: the first open, needed to
	// find the config, discards gitcommit's warnings and commit details.
	if ws.Repo != nil && !opts.DryRun {
		if ws.Repo, err = gitcommit.Open(ws.Root, gitcommit.WithLogger(logger)); err != nil {
			return fmt.Errorf("%w: %w", orchestrator.ErrSetup, err)
		}
	}
	// From here to the first session, --dry-run refuses what the run
	// refuses, in the same order and with the same errors (preflight.go,
	// which check shares).
	if opts.DryRun {
		return e.dryRun(ctx, ws, plan, opts, logger)
	}
	// The boundary is decided here too: `sandbox: on` on a machine that
	// cannot bound the run is refused, before any session.
	pre := e.preflight(ctx, ws, plan, opts, preflightRun)
	if err := pre.err(); err != nil {
		return err
	}
	avail, boundary := pre.SandboxAvail, pre.Boundary
	store := state.New(filepath.Join(ws.Root, ".debussy"))
	if note := runner.PermissionNote(ws.Config.PermissionMode, ws.Config.AllowedTools); note != "" {
		logger.Warn("the agent's commands will be refused", "problem", public.Own(note))
	}
	box, err := e.openSandbox(avail, &boundary, ws.Config)
	if err != nil {
		return err
	}
	if box != nil {
		defer box.Close()
	}
	logBoundary(logger, boundary, ws.Config)
	if box != nil {
		for _, n := range box.Notes {
			logger.Warn("sandbox: " + n)
		}
	}
	if opts.Answer != "" {
		if err := e.answer(answerOptions{Phase: opts.Only, Text: opts.Answer}); err != nil {
			return err
		}
	}
	if ws.Config.AutoCommit {
		if who := ws.Repo.MadeUpIdentity(ctx); who != "" {
			logger.Warn("git has no identity here: debussy commits as "+who,
				"fix", `git config user.name "Your Name" && git config user.email you@example.com (add --global for every repository)`)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find debussy's own path: %w", err)
	}
	tracer := e.startTracer(ctx, logger)
	started := time.Now()
	live := e.startView(logger)
	if live != nil {
		live.threshold, live.maxTokens = ws.Config.ContextThreshold, int64(ws.Config.ContextMaxTokens)
	}
	defer live.close()
	err = orchestrator.Run(ctx, orchestrator.Options{
		Config:      ws.Config,
		Plan:        plan,
		Repo:        ws.Repo,
		Store:       store,
		Logger:      logger,
		Out:         live.stdout(e.Stdout), // the summary table; stderr carries the log
		OutText:     public.TextShown(e.Stdout, e.Getenv, ws.Config.LogText),
		SelfDir:     filepath.Dir(self),
		Self:        self,
		PhaseID:     opts.Phase,
		Only:        opts.Only,
		Restart:     opts.Restart,
		FailFast:    opts.FailFast,
		Unblock:     opts.ResumeBlocked,
		Base:        opts.Base,
		Push:        opts.Push,
		Hard:        e.Hard,
		Env:         e.Environ(),
		StepSummary: e.Getenv("GITHUB_STEP_SUMMARY"),
		Now:         time.Now,
		ExitCode:    exitCode, // the ledger records the code this process exits with
		Progress:    live.progress(),
		Extend:      e.extender(live),
		Tracer:      tracer,
		Sandbox:     box,
	})
	live.close()
	endTracer(tracer, logger)
	if path := e.Getenv("GITHUB_STEP_SUMMARY"); path != "" {
		e.stepSummaryCharts(path, store, ws, started, logger)
	}
	return e.runEnded(err, store, started, opts)
}

// stepSummaryCharts appends the run's Mermaid charts (debussy report) below
// the table the orchestrator wrote to GitHub's step summary. A failure
// costs only the charts: a warning.
func (e *Env) stepSummaryCharts(path string, store *state.Store, ws *workspace, started time.Time, logger *slog.Logger) {
	l, err := store.Load()
	if err != nil {
		return
	}
	run := thisRun(l, started)
	if run == nil {
		return
	}
	in, err := loadReport(store, ws.Repo, run, ws.Config)
	if err == nil {
		var b strings.Builder
		report.Charts(&b, report.Build(in)) // redacted, like the report
		if b.Len() > 0 {
			err = appendFile(path, b.String()+"\n")
		}
	}
	if err != nil {
		logger.Warn("write the charts to GITHUB_STEP_SUMMARY", "err", err)
	}
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open step summary: %w", err)
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return fmt.Errorf("write step summary: %w", err)
	}
	return f.Close()
}

// thisRun is the run this process started at or after started, if the
// ledger has it.
func thisRun(l *state.Ledger, started time.Time) *state.Run {
	var run *state.Run
	for _, r := range l.Runs {
		if r.PID == os.Getpid() && !r.StartedAt.Before(started) && (run == nil || !r.StartedAt.Before(run.StartedAt)) {
			run = r
		}
	}
	return run
}

// runEndedError is a run that started and did not complete: its summary
// (stdout) has said what happened; this adds what to do next.
type runEndedError struct {
	err    error
	run    *state.Run
	resume string // the command that resumes it
	logs   string // the run's directory under .debussy
}

func (r *runEndedError) Error() string { return r.err.Error() }
func (r *runEndedError) Unwrap() error { return r.err }

// next is the plain-words ending printed after the summary.
func (r *runEndedError) next() string {
	var what string
	switch {
	case errors.Is(r.err, orchestrator.ErrLedger) || r.run.Status == state.StatusRunning:
		// The ledger could not record the end (a full disk, a read-only
		// .debussy/): the summary does not know why, so this says it.
		what = fmt.Sprintf("stopped: %v; fix that", r.err)
	case errors.Is(r.err, orchestrator.ErrUsageLimit):
		what = "stopped at a usage limit (the work so far is committed); wait for the reset named above"
	case r.run.Status == state.StatusInterrupted:
		what = "interrupted; the work so far is committed"
	case r.run.Status == state.StatusBlocked:
		return r.blocked()
	default:
		what = string(r.run.Status) + "; fix what the summary says"
	}
	return fmt.Sprintf("debussy: run %s %s, then resume with:\n  %s\nlogs: %s\n", r.run.ID, what, r.resume, r.logs)
}

// blocked is the ending of a blocked run: each blocked phase's question
// and the command that answers it, then how to go on. Without an answer
// the next run leaves the phase blocked (no session) unless
// --resume-blocked.
func (r *runEndedError) blocked() string {
	var b strings.Builder
	var ids []string
	for _, p := range r.blockedPhases() {
		ids = append(ids, p.ID)
		q := p.Question
		if q == "" {
			q = "(see debussy status)"
		}
		fmt.Fprintf(&b, "debussy: run %s blocked: phase %s asks: %s\n", r.run.ID, p.ID, text.OneLine(q, 300))
	}
	if len(ids) == 0 { // not recorded: the summary says why
		fmt.Fprintf(&b, "debussy: run %s blocked\n", r.run.ID)
	}
	b.WriteString("answer, then resume:\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "  %s\n", state.AnswerCommand(id))
	}
	fmt.Fprintf(&b, "  %s\n", r.resume)
	if len(ids) == 1 {
		fmt.Fprintf(&b, "or in one step: %s --answer \"…\"\n", r.resume)
	}
	fmt.Fprintf(&b, "(unanswered, a phase stays blocked and starts no session; --resume-blocked resumes it without an answer)\nlogs: %s\n", r.logs)
	return b.String()
}

// blockedPhases are the run's blocked phases.
func (r *runEndedError) blockedPhases() []*state.PhaseRecord {
	var out []*state.PhaseRecord
	for _, p := range r.run.Phases {
		if p.Status == state.StatusBlocked {
			out = append(out, p)
		}
	}
	return out
}

// answerCommands are the commands that answer the run's blocked phases.
func (r *runEndedError) answerCommands() []string {
	var out []string
	for _, p := range r.blockedPhases() {
		out = append(out, state.AnswerCommand(p.ID))
	}
	return out
}

// runEnded turns the error of a run that started (the ledger has it) into
// a runEndedError; refusals before the start pass through unchanged.
func (e *Env) runEnded(err error, store *state.Store, started time.Time, opts runOptions) error {
	if err == nil {
		return nil
	}
	resume := "debussy run " + shellQuote(opts.PlanPath)
	if opts.ConfigFile != "" {
		resume += " --config " + shellQuote(opts.ConfigFile)
	}
	if opts.Only != "" && (opts.Base != "" || opts.Push != "") {
		// A CI job's phase: the same job again.
		resume += " --only " + shellQuote(opts.Only)
		if opts.Base != "" {
			resume += " --base " + opts.Base
		}
		if opts.Push != "" {
			resume += " --push " + shellQuote(opts.Push)
		}
	}
	l, lerr := store.Load()
	var run *state.Run
	if lerr == nil {
		run = thisRun(l, started)
	}
	if run == nil {
		if errors.Is(err, gitcommit.ErrLocked) {
			// Refused before the run began: a git process's lock (debussy
			// removes its own, see gitcommit.ReclaimLocks) is the user's
			// to wait out; then the same command carries on.
			return fmt.Errorf("%w\nonce that git process is done, run again: %s", err, resume)
		}
		return err
	}
	logs := store.RunDir(run.ID)
	if dir, werr := e.workDir(); werr == nil {
		if rel, rerr := filepath.Rel(dir, logs); rerr == nil && !strings.HasPrefix(rel, "..") {
			logs = rel
		}
	}
	return &runEndedError{err: err, run: run, resume: resume, logs: logs + string(filepath.Separator)}
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@+,") == "" {
		return s
	}
	return text.ShellQuote(s)
}
