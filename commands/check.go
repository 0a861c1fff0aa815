package commands

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/runner"
)

type checkOptions struct {
	PlanPath    string
	ConfigFile  string
	JSON        bool
	StrictGates bool
	AllowDirty  bool
	Sandbox     string // --sandbox; "" keeps the config's
}

func (e *Env) checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "read a master plan and report every problem with file:line",
		ArgsUsage: "MASTER_PLAN.md",
		Description: `Loads the master plan and its phase files exactly as 'run' would and prints each
finding as file:line: severity: message [code]. Then it checks, as 'run' does before its
first session, what would stop a run here, and lists every problem with its fix: not a
git repository, no commit yet, uncommitted changes to tracked files, claude missing or not
a program, another run in progress, claude refusing the permission mode (root without
IS_SANDBOX=1), a gate's program not installed. Exits 2 on any error or problem (a run
would stop on it), else 0.

--json prints one object: {"plan", "phases": [{"id","title","file","status","depends_on",
"gates":[{"name","command","preset","unchecked"}], "tasks":[{"text","done","line"}]}], "findings": [...]}.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the plan and findings as one JSON object"},
			&cli.StringFlag{Name: "config", Usage: "config `FILE` (for gate_commands)"},
			&cli.BoolFlag{Name: "strict-gates", Usage: "a gate with no command, no preset and no gate_commands entry is an error, not a warning (strict_gates)"},
			&cli.BoolFlag{Name: "allow-dirty", Usage: "as run --allow-dirty: uncommitted changes to tracked files are no problem (allow_dirty)"},
			sandboxFlag(),
		},
		Action: func(c *cli.Context) error {
			plan, err := oneArg(c, "MASTER_PLAN.md")
			if err != nil {
				return err
			}
			return e.check(c.Context, checkOptions{PlanPath: plan, ConfigFile: c.String("config"), JSON: c.Bool("json"), StrictGates: c.Bool("strict-gates"),
				AllowDirty: c.Bool("allow-dirty"), Sandbox: c.String("sandbox")})
		},
	}
}

func (e *Env) check(ctx context.Context, opts checkOptions) error {
	ws, err := e.loadWorkspace(opts.ConfigFile, func(c *config.Config) {
		c.StrictGates = c.StrictGates || opts.StrictGates
		c.AllowDirty = c.AllowDirty || opts.AllowDirty
		if opts.Sandbox != "" {
			c.Sandbox = opts.Sandbox
		}
	})
	if err != nil {
		return err
	}
	plan, err := e.loadPlan(ws, opts.PlanPath)
	if err != nil {
		return err
	}
	e.markCompleted(ws, plan) // a phase done in a run is not "pending"
	// What would stop a run here, found as the run finds it (preflight.go)
	// but every one of them: no repository or commit, a dirty tree, claude
	// missing, another run, sandbox: on where no boundary can be made,
	// claude refusing the permission mode, a gate's program missing. Each
	// is exit 2, as the run would end.
	pre := e.preflight(ctx, ws, plan, runOptions{}, preflightAll)
	problems := pre.problems()
	if opts.JSON {
		enc := jsonEncoder(e.Stdout)
		if plan.Findings == nil {
			plan.Findings = []plans.Finding{}
		}
		// The problems a run here would stop on (exit 2) are the JSON's
		// too, not only stderr's.
		out := struct {
			*plans.Plan
			Problems []string `json:"problems"`
		}{plan, append([]string{}, problems...)}
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("write json: %w", err)
		}
	} else {
		printCheck(e.Stdout, plan, problems)
	}
	startLine(e.Stderr)
	if note := runner.PermissionNote(ws.Config.PermissionMode, ws.Config.AllowedTools); note != "" {
		fmt.Fprintf(e.Stderr, "warning: %s\n", note)
	}
	for _, p := range problems {
		fmt.Fprintf(e.Stderr, "error: %s\n", p)
	}
	if pre.Boundary.Line != "" {
		fmt.Fprintf(e.Stderr, "%s\n", pre.Boundary.Line)
	}
	if err := plan.Err(); err != nil {
		return &shownError{err}
	}
	if len(problems) > 0 {
		return &shownError{hereError(problems)}
	}
	return nil
}

// printCheck lists the plan's phases and findings, and sums them up with
// the here problems (printed to stderr) a run would stop on.
func printCheck(w io.Writer, p *plans.Plan, problems []string) {
	here := len(problems)
	fmt.Fprintf(w, "%s: %s\n", p.Name, plural(len(p.Phases), "phase"))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, ph := range p.Phases {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", ph.ID, ph.Title, ph.Status, plural(len(ph.Gates), "gate"), plural(len(ph.Tasks), "task"))
	}
	tw.Flush()
	// Gates whose command the plan does not write: what will run, or that
	// nothing will.
	for _, ph := range p.Phases {
		for _, g := range ph.Gates {
			if g.Preset || g.FromConfig || g.Unchecked {
				fmt.Fprintf(w, "  %s %s\n", ph.ID, gateLine(g))
			}
		}
	}
	errs := 0
	for _, f := range p.Findings {
		if f.Severity == "error" {
			errs++
		}
		fmt.Fprintln(w, f.String())
	}
	for _, pr := range problems {
		fmt.Fprintf(w, "problem: %s\n", pr)
	}
	switch {
	case here > 0:
		fmt.Fprintf(w, "%s, %s, %s a run here would stop on (above)\n", plural(errs, "error"), plural(len(p.Findings)-errs, "warning"), plural(here, "problem"))
	case errs > 0:
		fmt.Fprintf(w, "%s, %s\n", plural(errs, "error"), plural(len(p.Findings)-errs, "warning"))
	case len(p.Findings) > 0:
		fmt.Fprintf(w, "ok, %s\n", plural(len(p.Findings), "warning"))
	default:
		fmt.Fprintln(w, "ok")
	}
}

// dryRun is `run --dry-run`: what the run would refuse before its first
// session, refused the same way and before printing anything; else the
// run's preview, then the problems it would stop on at its first session
// last, where the eye lands (exit 2, as the run would end).
func (e *Env) dryRun(ctx context.Context, ws *workspace, plan *plans.Plan, opts runOptions, logger *slog.Logger) error {
	pre := e.preflight(ctx, ws, plan, opts, preflightDry)
	if len(pre.Refusals) > 0 {
		return pre.Refusals[0]
	}
	note := runner.PermissionNote(ws.Config.PermissionMode, ws.Config.AllowedTools)
	problems := len(pre.Later)
	printDryRun(e.Stdout, plan, ws, pre.Preview, opts.Phase, pre.Boundary.Line, problems)
	if note != "" {
		logger.Warn("the agent's commands would be refused", "problem", public.Own(note))
	}
	for _, p := range pre.Later {
		logger.Error("a run would fail here", "problem", public.Own(p))
	}
	if problems == 0 {
		return nil
	}
	return &shownError{pre.err()} // exit 2, as the run would
}

// printDryRun prints what `run` would do, and the config it would use.
// The preview is orchestrator.Check's: what the run would decide.
func printDryRun(w io.Writer, p *plans.Plan, ws *workspace, preview *orchestrator.Preview, from, boundary string, problems int) {
	fmt.Fprintf(w, "plan: %s (%s)\n", p.Name, p.Path)
	fmt.Fprintf(w, "phases in run order:\n")
	for _, ph := range preview.Order {
		note := ""
		switch {
		case preview.Todo[ph.ID]:
		case preview.Skipped[ph.ID]:
			note = "  (skipped: already completed)"
		case from == "": // neither todo nor completed without --phase: --only
			note = "  (not run: --only runs one phase)"
		default:
			note = "  (before --phase " + from + ")"
		}
		deps := "none"
		if len(ph.DependsOn) > 0 {
			deps = strings.Join(ph.DependsOn, ", ")
		}
		fmt.Fprintf(w, "  %s  %s  [%s]%s\n", ph.ID, ph.Title, ph.Status, note)
		fmt.Fprintf(w, "      file: %s\n      depends on: %s\n", ph.File, deps)
		if len(ph.Gates) == 0 {
			fmt.Fprintf(w, "      gates: none\n")
		}
		for _, g := range ph.Gates {
			fmt.Fprintf(w, "      %s\n", gateLine(g))
		}
	}
	src := []string{"defaults"}
	if ws.Source.File != "" {
		src = append(src, ws.Source.File)
	}
	if len(ws.Source.Env) > 0 {
		src = append(src, "env "+strings.Join(ws.Source.Env, ", "))
	}
	fmt.Fprintf(w, "config (%s, then flags):\n", strings.Join(src, " < "))
	for _, n := range ws.Source.Notes {
		fmt.Fprintf(w, "  # %s\n", n)
	}
	for _, line := range strings.Split(strings.TrimRight(ws.Config.YAML(), "\n"), "\n") {
		fmt.Fprintf(w, "  %s\n", line)
	}
	fmt.Fprintln(w, boundary)
	if n := len(preview.UserFiles); n > 0 && ws.Config.AutoCommit {
		names := preview.UserFiles
		if n > 5 {
			names = append(names[:5:5], fmt.Sprintf("and %d more", n-5))
		}
		fmt.Fprintf(w, "%s now (yours: debussy's commits leave them out unless the agent changes them): %s\n",
			plural(n, "untracked file"), strings.Join(names, ", "))
	}
	for _, line := range preview.Remote {
		fmt.Fprintln(w, line)
	}
	if problems > 0 {
		fmt.Fprintf(w, "dry run: nothing started; a run here would stop on %s (below)\n", plural(problems, "problem"))
		return
	}
	fmt.Fprintln(w, "dry run: nothing started")
}

// gateLine shows a gate and where its command comes from:
// "gate ruff → `uv run ruff check .` (preset)", or UNCHECKED.
func gateLine(g plans.Gate) string {
	if g.Unchecked {
		return fmt.Sprintf("gate %s: UNCHECKED (no command: the agent is told to meet %q; never reported as passed)", g.Name, g.Requirement)
	}
	return fmt.Sprintf("gate %s → `%s` (%s)", g.Name, g.Command, g.Source())
}

// planOptions are the parts of the workspace that change how a plan reads.
func planOptions(ws *workspace) plans.Options {
	return plans.Options{GateCommands: ws.Config.GateCommands, Root: ws.Root, StrictGates: ws.Config.StrictGates}
}
