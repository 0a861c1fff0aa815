package commands

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/claudeconf"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/internal/gitrun"
	"github.com/debussy-dev/debussy/runner"
)

// gitVersionFinding judges git --version's line: a git that cannot merge
// (gitcommit.CanMerge) commits a phase's work but cannot merge one.
func gitVersionFinding(out, mode string) finding {
	v := strings.TrimSpace(out)
	if ok, known := gitcommit.CanMerge(v); known && !ok {
		return finding{"warn", "git", fmt.Sprintf("%s%s: merging a phase (--parallel, --base deps, --push after a rejected push) needs git %d.%d or later",
			v, mode, gitcommit.MergeGit[0], gitcommit.MergeGit[1]), "upgrade git; runs without those options work with this one"}
	}
	return finding{"ok", "git", v + mode, ""}
}

// ErrDoctor is returned when doctor found something that stops a run.
var ErrDoctor = errors.New("doctor found problems")

type doctorOptions struct {
	ConfigFile string
	Timeout    time.Duration
	NoLogin    bool // skip the login check's session (its one API request)
}

func (e *Env) doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check that a run would work here: claude, its protocol, model, login, git, permissions, config, your hooks and plugins",
		Description: strings.TrimSpace(`
Checks, without touching the repository:

  claude      the binary debussy would run (claude_bin) and its version
  protocol    whether claude answers the control requests debussy relies on:
              initialize with hook callbacks (safe stops), get_context_usage (the
              window) and interrupt — claude is started with stream-json in and out,
              in its own process group, and stopped after --timeout at most
  model       the model a session would use (model, else claude's default) and its
              context window and compaction point, as claude reports them
  login       one short session, started as a run starts one, read the way a run reads
              its ending: not logged in, a refused key, a usage limit, an unreachable
              API (one small API request; --no-login skips it)
  permission  whether claude accepts permission_mode here: as root it refuses
              bypassPermissions (--dangerously-skip-permissions) unless IS_SANDBOX=1
  sandbox     the boundary a run would have (sandbox: auto, on, off): whether bubblewrap
              and socat are here and work, nested as claude's own sandbox nests
  git         git's version (merging phases needs 2.38 or later)
  config      the config file and DEBUSSY_* variables in effect
  hooks       your own hooks on the events debussy answers (PreToolUse, PostToolUse,
              Stop, PreCompact) in ~/.claude/settings.json ($CLAUDE_CONFIG_DIR) and the
              project's .claude/settings.json and settings.local.json: claude runs them
              beside debussy's, and each may change what debussy sees
  plugins     the plugins enabled there, and their hooks on those events

Each line is ok, warn (a run works, with the caveat shown) or FAIL followed by the fix.
Exit codes: 0 a run would work, 2 at least one FAIL (each with its fix).

Start here when a run fails before its first session, or behaves unlike the docs.`),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "config `FILE` (default: .debussy.yaml of the repository)"},
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, Usage: "how long claude may take to answer"},
			&cli.BoolFlag{Name: "no-login", Usage: "skip the login check (the one check that sends an API request)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr(c, "doctor takes no arguments, got %s", strings.Join(c.Args().Slice(), " "))
			}
			return e.doctor(c.Context, doctorOptions{ConfigFile: c.String("config"), Timeout: c.Duration("timeout"), NoLogin: c.Bool("no-login")})
		},
	}
}

// finding is one line of doctor's report.
type finding struct {
	level string // "ok", "warn", "FAIL"
	name  string
	text  string
	fix   string
}

func (e *Env) doctor(ctx context.Context, opts doctorOptions) error {
	var fs []finding
	add := func(level, name, text, fix string) { fs = append(fs, finding{level, name, text, fix}) }

	cfg := config.Defaults()
	env := e.Environ()
	ws, err := e.loadWorkspace(opts.ConfigFile, nil)
	switch {
	case err != nil:
		add("FAIL", "config", err.Error(), "fix the config file or variable named above (debussy check reports the same)")
		cfg = envOnlyConfig(env)
	default:
		cfg = ws.Config
		add("ok", "config", describeSource(ws.Source), "")
		for _, n := range ws.Source.Notes {
			add("warn", "config", n, "")
		}
	}
	root := ""
	if ws != nil {
		root = ws.Root
	}

	mode := cfg.PermissionMode
	if slices.Contains(cfg.ExtraArgs, "--dangerously-skip-permissions") {
		mode = "bypassPermissions"
	}
	permProblem := runner.PermissionProblem(mode, env)
	if permProblem != "" {
		why, fix, _ := strings.Cut(permProblem, ": ")
		add("FAIL", "permission", why, fix)
	} else if note := runner.PermissionNote(cfg.PermissionMode, cfg.AllowedTools); note != "" {
		why, fix, _ := strings.Cut(note, ": ")
		add("warn", "permission", why, fix)
	} else {
		add("ok", "permission", "permission_mode "+cmp.Or(cfg.PermissionMode, "(claude's default)"), "")
	}

	fs = append(fs, e.sandboxFindings(ctx, cfg, root)...)

	spec := runner.Spec{Bin: cfg.ClaudeBin, Model: cfg.Model, PermissionMode: cfg.PermissionMode,
		ExtraArgs: cfg.ExtraArgs, Dir: root, Env: env}
	if permProblem != "" {
		// Already reported: probe the rest with a mode claude accepts.
		spec.PermissionMode = "acceptEdits"
		spec.ExtraArgs = slices.DeleteFunc(slices.Clone(cfg.ExtraArgs), func(a string) bool { return a == "--dangerously-skip-permissions" })
	}
	probe, err := runner.ProbeCLI(ctx, spec, opts.Timeout)
	if err != nil {
		add("FAIL", "claude", err.Error(), "install Claude Code (npm install -g @anthropic-ai/claude-code) or set claude_bin / DEBUSSY_CLAUDE_BIN to its path")
	} else {
		fs = append(fs, probeFindings(probe, cfg, opts.Timeout)...)
		if !opts.NoLogin && (probe.Initialize.Answered || !probe.Exited) {
			login := spec
			login.AllowedTools = cfg.AllowedTools
			// As a run's first session: an API that cannot be connected
			// to fails in seconds, not after the CLI's minutes of retries.
			login.FirstContact = true
			fs = append(fs, loginFindings(ctx, login, opts.Timeout)...)
		}
	}

	if e.Getenv != nil {
		if f, ok := ciLoginFinding(e.Getenv); ok {
			fs = append(fs, f)
		}
		fs = append(fs, billingFinding(e.Getenv))
	}

	out, gitErr := gitrun.Runner{}.Run(ctx, gitrun.Call{}, "--version")
	switch {
	case ws != nil && ws.RepoErr != nil:
		add("FAIL", "git", ws.RepoErr.Error(), "fix the repository named above (git status shows the same)")
	case ws != nil && ws.Repo == nil:
		// A run refuses it: debussy commits the agent's work.
		add("FAIL", "git", root+" is not a git repository",
			"run debussy in your project's repository (cd into it), or make this one: git init && git add -A && git commit -m init")
	case ws != nil && noCommit(ws.Repo):
		// A run refuses it too: every file would be the user's.
		add("FAIL", "git", root+" has no commit yet: a run refuses it (debussy commits the agent's work on top of yours)",
			"commit what belongs in the project first: git add -A && git commit -m \"initial commit\"")
	case gitErr != nil:
		add("warn", "git", "git not found: "+gitErr.Error()+"; commits: made by go-git (git-less mode), only in a repository where its answer is git's",
			"install git: then git makes every commit, exactly as `git add -A && git commit`, and --parallel works")
		var unsupported *gitcommit.UnsupportedError
		if ws != nil && ws.Repo != nil && ws.Config.AutoCommit {
			if err := ws.Repo.Preflight(); errors.As(err, &unsupported) {
				add("FAIL", "git", "git-less mode refuses this repository: "+err.Error(), "install git")
			}
		}
	default:
		mode := ""
		if ws != nil && ws.Repo != nil {
			mode = "; commits: made by " + ws.Repo.Mode()
		}
		fs = append(fs, gitVersionFinding(string(out), mode))
	}

	// Hooks and plugins of the user's own that claude runs beside debussy's.
	getenv := e.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	fs = append(fs, hookFindings(claudeconf.Read(claudeconf.DirsFor(getenv, root)))...)

	order := []string{"claude", "protocol", "model", "login", "billing", "permission", "sandbox", "git", "config", "hooks", "plugins"}
	slices.SortStableFunc(fs, func(a, b finding) int {
		return cmp.Compare(slices.Index(order, a.name), slices.Index(order, b.name))
	})
	problems := printFindings(e.Stdout, fs)
	if problems > 0 {
		return &shownError{fmt.Errorf("%w: %d", ErrDoctor, problems)}
	}
	return nil
}

// probeFindings reads what the probe learned about claude.
func probeFindings(p runner.Probe, cfg config.Config, timeout time.Duration) []finding {
	var fs []finding
	add := func(level, name, text, fix string) { fs = append(fs, finding{level, name, text, fix}) }
	add("ok", "claude", fmt.Sprintf("%s (%s)", p.Path, cmp.Or(p.Version, "version unknown")), "")
	if note := runner.CLIVersionNote(p.Version); note != "" {
		add("warn", "claude", note, fmt.Sprintf("debussy supports Claude Code %s to %s: npm install -g @anthropic-ai/claude-code@%s",
			runner.OldestCLI, runner.NewestTestedCLI, runner.NewestTestedCLI))
	}
	if p.Exited && !p.Initialize.Answered && !p.ContextUsage.Answered {
		msg := fmt.Sprintf("claude exited with code %d before answering", p.ExitCode)
		if line := firstLine(p.Stderr); line != "" {
			msg += ": " + line
		}
		// A refusal a run would meet reads as the run reads it (root and
		// bypassPermissions, an unknown option).
		fix := "run claude by hand with the same flags and fix what it says"
		if f := failure.Classify(failure.Facts{Stderr: p.Stderr}); f.Class.Setup() {
			fix = f.Fix
		}
		add("FAIL", "protocol", msg, fix)
		return fs
	}
	answered := func(a runner.ControlAnswer) string {
		switch {
		case a.OK():
			return "answered"
		case a.Answered:
			return "refused (" + a.Error + ")"
		}
		return "no answer within " + timeout.String()
	}
	if p.Initialize.OK() {
		add("ok", "protocol", "initialize with hook callbacks: answered", "")
	} else {
		add("warn", "protocol", "initialize with hook callbacks: "+answered(p.Initialize),
			"stops will interrupt the session instead of ending it after a tool; upgrade Claude Code")
	}
	switch {
	case p.Interrupt.OK():
		add("ok", "protocol", "interrupt: answered", "")
	case !p.Initialize.OK():
		add("FAIL", "protocol", "interrupt: "+answered(p.Interrupt)+", and no hook callbacks: debussy cannot stop a session safely",
			"upgrade Claude Code (npm install -g @anthropic-ai/claude-code@latest)")
	default:
		add("warn", "protocol", "interrupt: "+answered(p.Interrupt), "a Ctrl-C stops the session only after its turn; upgrade Claude Code")
	}
	c := p.Context
	if !p.ContextUsage.OK() || !c.OK() {
		why := answered(p.ContextUsage)
		if c != nil && c.Error != "" {
			why = c.Error
		}
		add("warn", "protocol", "get_context_usage: "+why, "the window comes from debussy's model table; set context_window if it is wrong")
		return fs
	}
	add("ok", "protocol", "get_context_usage: answered", "")
	model := cmp.Or(c.Model, cfg.Model)
	if cfg.Model == "" {
		model += " (claude's default)"
	}
	text := fmt.Sprintf("%s: window %s", model, estimator.FormatTokens(c.MaxTokens))
	if at := c.CompactionPoint(); at > 0 {
		text += fmt.Sprintf(", claude compacts at %s", estimator.FormatTokens(at))
	} else {
		text += ", claude does not compact before the window is full"
	}
	if cfg.ContextWindow > 0 {
		text += fmt.Sprintf("; context_window %s set in the config wins", estimator.FormatTokens(int64(cfg.ContextWindow)))
	}
	add("ok", "model", text, "")
	return fs
}

// printFindings writes the report and returns the number of FAILs.
func printFindings(w io.Writer, fs []finding) int {
	problems := 0
	for _, f := range fs {
		fmt.Fprintf(w, "%-5s %-10s %s\n", f.level, f.name, f.text)
		if f.fix != "" && f.level != "ok" {
			fmt.Fprintf(w, "%-5s %-10s fix: %s\n", "", "", f.fix)
		}
		if f.level == "FAIL" {
			problems++
		}
	}
	switch problems {
	case 0:
		if !slices.ContainsFunc(fs, func(f finding) bool { return f.name == "login" && f.level == "ok" }) {
			// Without an answer from the API nothing says a run would.
			fmt.Fprintln(w, "no problem found, but the API has not answered here: a run may still fail on credentials or the network")
			break
		}
		fmt.Fprintln(w, "ok: a run would work here")
	default:
		fmt.Fprintf(w, "%s: a run would not work here; fix each FAIL above\n", plural(problems, "problem"))
	}
	return problems
}

// envOnlyConfig is the defaults and the DEBUSSY_* variables without any
// file, so the other checks still use the claude_bin, model, ... the user
// set when the file is what is wrong; the defaults when those are wrong too.
func envOnlyConfig(env []string) config.Config {
	dir, err := os.MkdirTemp("", "debussy-doctor-")
	if err != nil {
		return config.Defaults()
	}
	defer os.RemoveAll(dir)
	cfg, _, err := config.Load(dir, "", env)
	if err != nil {
		return config.Defaults()
	}
	return cfg
}

func describeSource(s config.Source) string {
	text := "no config file (defaults)"
	if s.File != "" {
		text = s.File
	}
	if len(s.Env) > 0 {
		text += "; from the environment: " + strings.Join(s.Env, ", ")
	}
	return text
}

// noCommit reports whether repo has no commit yet (an unborn branch).
func noCommit(repo *gitcommit.Repo) bool {
	head, err := repo.Head()
	return err == nil && head == ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
