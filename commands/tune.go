package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/claudeconf"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/history"
	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/tune"
)

type tuneOptions struct {
	Plan        string   // only runs of this master plan; "" all
	Runs        []string // only these runs; none: all
	FromClaude  bool     // also Claude Code's transcripts
	ClaudeDir   string   // their folder; "": the CLI's for this repository
	Thresholds  []int
	Caps        []int
	MaxRestarts []int
	Objective   string
	JSON        bool
	Write       bool
	ConfigFile  string
}

// optionalDir is a flag that may stand alone (--from-claude) or take a
// value (--from-claude=DIR): Go's flag package treats a Value with
// IsBoolFlag as a switch that also accepts "=value". `--from-claude DIR`
// leaves DIR among the arguments, where tune finds it (a directory).
type optionalDir struct {
	set bool
	dir string
}

func (o *optionalDir) Set(v string) error {
	o.set = true
	if v != "true" {
		o.dir = v
	}
	return nil
}
func (o *optionalDir) String() string   { return o.dir }
func (o *optionalDir) IsBoolFlag() bool { return true }

func (e *Env) tuneCommand() *cli.Command {
	var objectives strings.Builder
	for _, o := range tune.Objectives {
		fmt.Fprintf(&objectives, "  %-9s %s\n", o, tune.ObjectiveHelp[o])
	}
	return &cli.Command{
		Name:      "tune",
		Usage:     "choose context_threshold, context_max_tokens and max_restarts from what your own sessions did",
		ArgsUsage: "[MASTER_PLAN.md]",
		Description: `Replays the sessions of past runs (every run in .debussy/, or --run; with a plan, its runs
only) and, with --from-claude, Claude Code's own transcripts, through the same policy code a
run decides with, under each candidate setting: where each session would have been warned,
asked for its handoff and restarted. After a modelled restart the next session starts at the
measured size of a restart prompt and grows by what the recorded turns added.

It first replays every run at the settings it ran with and prints whether that reproduces
the restarts the run made, where it made them (the self-check). Then a table: the current
settings first, then each candidate — sessions, restarts, phases that would have run out of
restarts, peak context, turns above 200K and 400K, and the modelled cost (cache writes, cache
reads, input and output at the model's prices; what the model assumed is printed below it).
Quality signals from the history (gate failures after a restart, files re-read before the
first edit, agent handoffs declined) are shown beside the cost, never mixed into it.

Objectives (--objective):
` + objectives.String() + `
--write puts the recommendation into .debussy.yaml (created if missing; your other keys and
comments stay) with a comment naming the evidence.

Examples:
  debussy tune                                   # every recorded run, the default grid
  debussy tune --threshold 50,60,70,80 --cap 200K,400K --objective balanced
  debussy tune --from-claude                     # also ~/.claude/projects/<this repository>
  debussy tune --run 20261206-0131-cf75 --json
  debussy tune --write`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "run", Usage: "only run `ID` (repeat for more; debussy status shows ids)"},
			&cli.GenericFlag{Name: "from-claude", Value: &optionalDir{},
				Usage: "also read Claude Code's transcripts: those of this repository (~/.claude/projects/<escaped path>, " +
					"or under $CLAUDE_CONFIG_DIR), or the folder `DIR` given as --from-claude DIR"},
			&cli.StringFlag{Name: "threshold", Usage: "candidate context_threshold `PERCENTS`, e.g. 50,60,70,80 (default 50,60,70,80,90)"},
			&cli.StringFlag{Name: "cap", Usage: "candidate context_max_tokens `TOKENS`, e.g. 200K,400K (default: the current; with 1M windows also 200K,400K,600K)"},
			&cli.StringFlag{Name: "max-restarts", Usage: "candidate max_restarts `COUNTS`, e.g. 3,5 (default: the current, and what the work needed where it ran out)"},
			&cli.StringFlag{Name: "objective", Value: tune.ObjectiveCost, Usage: "what the recommendation optimizes: `cost|context|balanced` (see above)"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
			&cli.BoolFlag{Name: "write", Usage: "write the recommendation into .debussy.yaml"},
			&cli.StringFlag{Name: "config", Usage: "config `FILE` (default: .debussy.yaml of the repository)"},
		},
		Action: func(c *cli.Context) error {
			opts := tuneOptions{Runs: c.StringSlice("run"), Objective: c.String("objective"), JSON: c.Bool("json"),
				Write: c.Bool("write"), ConfigFile: c.String("config")}
			if !slices.Contains(tune.Objectives, opts.Objective) {
				return usageErr(c, "--objective %q: want one of %s", opts.Objective, strings.Join(tune.Objectives, ", "))
			}
			fc := c.Generic("from-claude").(*optionalDir)
			opts.FromClaude = fc.set
			if fc.dir != "" {
				opts.ClaudeDir = absPath(e.abs(fc.dir))
			}
			for _, a := range c.Args().Slice() {
				p := absPath(e.abs(a))
				info, err := os.Stat(p)
				switch {
				case err == nil && info.IsDir() && opts.FromClaude && opts.ClaudeDir == "":
					opts.ClaudeDir = p // --from-claude DIR
				case opts.Plan != "":
					return usageErr(c, "unexpected argument %q", a)
				case err != nil:
					return usageErr(c, "no master plan %s: %v", a, err)
				default:
					opts.Plan = p
				}
			}
			var err error
			if opts.Thresholds, err = intList(c.String("threshold"), parsePercent); err != nil {
				return usageErr(c, "--threshold: %v", err)
			}
			if opts.Caps, err = intList(c.String("cap"), parseTokens); err != nil {
				return usageErr(c, "--cap: %v", err)
			}
			if opts.MaxRestarts, err = intList(c.String("max-restarts"), parseCount); err != nil {
				return usageErr(c, "--max-restarts: %v", err)
			}
			return e.tune(c.Context, opts)
		},
	}
}

func (e *Env) tune(_ context.Context, opts tuneOptions) error {
	ws, err := e.loadWorkspace(opts.ConfigFile, nil)
	if err != nil {
		return err
	}
	runs := history.Runs(filepath.Join(ws.Root, state.DirName), history.RunFilter{IDs: opts.Runs, Plan: opts.Plan})
	streams, skipped, notes := runs.Streams, runs.Skipped, runs.Notes
	if opts.FromClaude {
		dir := opts.ClaudeDir
		if dir == "" {
			dir = history.ProjectDir(claudeconf.DirsFor(e.Getenv, ws.Root).Config, ws.Root)
		}
		tr := history.Transcripts(dir, runs.SessionIDs)
		streams = append(streams, tr.Streams...)
		skipped, notes = append(skipped, tr.Skipped...), append(notes, tr.Notes...)
	}
	rep, err := tune.Tune(streams, tune.Options{Config: ws.Config, Thresholds: opts.Thresholds, Caps: opts.Caps,
		MaxRestarts: opts.MaxRestarts, Objective: opts.Objective})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	rep.Skipped, rep.Notes = append(rep.Skipped, skipped...), append(rep.Notes, notes...)
	written := ""
	if opts.Write {
		if written, err = e.writeTuned(ws, opts, rep); err != nil {
			return err
		}
	}
	if opts.JSON {
		return writeJSON(e.Stdout, struct {
			*tune.Report
			Written string `json:"written,omitempty"`
		}{rep, written}, false)
	}
	rep.WriteText(e.Stdout)
	if written != "" {
		fmt.Fprintf(e.Stdout, "\nWrote the recommendation to %s.\n", written)
	}
	return nil
}

// writeTuned writes the recommendation into the config file in use (or a
// new .debussy.yaml) and checks that the result loads, as `debussy check`
// loads it; a file that would not is put back as it was.
func (e *Env) writeTuned(ws *workspace, opts tuneOptions, rep *tune.Report) (string, error) {
	rec := rep.Recommended
	if rec == nil || len(rep.Streams) == 0 {
		return "", fmt.Errorf("%w: --write: no sessions to tune from", ErrUsage)
	}
	path := ws.Source.File
	if opts.ConfigFile != "" {
		path = e.abs(opts.ConfigFile)
	}
	if path == "" {
		path = filepath.Join(ws.Root, config.FileName)
	}
	old, readErr := os.ReadFile(path)
	settings := []config.Setting{
		{Key: "context_threshold", Value: strconv.Itoa(rec.ContextThreshold)},
		{Key: "context_max_tokens", Value: strconv.Itoa(rec.ContextMaxTokens)},
		{Key: "max_restarts", Value: strconv.Itoa(rec.MaxRestarts)},
	}
	comment := []string{
		fmt.Sprintf("debussy tune %s (objective %s): from %s.", time.Now().Format("2006-01-02"), rec.Objective, rep.Evidence()),
		fmt.Sprintf("debussy tune: %s; self-check %s. Rerun debussy tune to see the table.", rec.Why, selfCheckWord(rep)),
	}
	if err := config.SetKeys(path, settings, "debussy tune", comment); err != nil {
		return "", err
	}
	if _, _, err := config.Load(ws.Root, path, e.Environ()); err != nil {
		if readErr == nil {
			_ = os.WriteFile(path, old, 0o644)
		} else {
			_ = os.Remove(path)
		}
		return "", fmt.Errorf("--write: the tuned config would not load, left as it was: %w", err)
	}
	for _, s := range settings {
		if v := e.Getenv(config.EnvVar(s.Key)); v != "" {
			fmt.Fprintf(e.Stderr, "note: %s=%s overrides the %s just written\n", config.EnvVar(s.Key), v, s.Key)
		}
	}
	return path, nil
}

func selfCheckWord(rep *tune.Report) string {
	switch {
	case len(rep.SelfCheck.Sessions) == 0:
		return "not applicable (transcripts only)"
	case rep.SelfCheck.Exact:
		return "exact"
	}
	return "not exact"
}

// absPath is p absolute, as runs record their plan.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// intList parses "50,60,70" with parse; "" is none.
func intList(s string, parse func(string) (int, error)) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := parse(f)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func parsePercent(s string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(s, "%")))
	if err != nil || v < 1 || v > 100 {
		return 0, fmt.Errorf("%q is not a percentage from 1 to 100", s)
	}
	return v, nil
}

// parseTokens reads 200K, 1M, 250000 or none (0: no cap).
func parseTokens(s string) (int, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	if u == "NONE" || u == "0" {
		return 0, nil
	}
	mult := 1.0
	switch {
	case strings.HasSuffix(u, "K"):
		mult, u = 1e3, strings.TrimSuffix(u, "K")
	case strings.HasSuffix(u, "M"):
		mult, u = 1e6, strings.TrimSuffix(u, "M")
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(u, "_", ""), 64)
	if err != nil || f*mult < 1000 || f*mult > 1e8 {
		return 0, fmt.Errorf("%q is not a token count (200K, 1M, 250000, none)", s)
	}
	return int(f * mult), nil
}

func parseCount(s string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a count", s)
	}
	return v, nil
}
