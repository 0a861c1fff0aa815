// Package commands is debussy's command-line surface: it parses flags into
// options structs and calls the packages that do the work.
package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/internal/buildinfo"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/secrets"
)

// Main runs debussy with args (os.Args) and returns the exit code.
func Main(args []string) int {
	ctx, hard, stop := signalContext()
	defer stop()
	env := &Env{
		Stdin: os.Stdin,
		// Everything debussy prints passes the redactor (config's
		// redact_allow installs its allow list once loaded).
		Stdout: secrets.Writer(os.Stdout),
		Stderr: secrets.Writer(os.Stderr),
		// For generated CI files (pipeline), whose shell reads tokens from
		// the environment: the redactor takes `password=$TOKEN` for a
		// secret and would break them. What they hold from the user is
		// redacted piece by piece instead.
		RawStdout: os.Stdout,
		Getenv:    os.Getenv,
		Environ:   os.Environ,
		Hard:      hard,
	}
	return env.Run(ctx, args)
}

// Env is what a command may touch of the outside world; tests supply their own.
type Env struct {
	Stdin          io.Reader // read only to answer a question on a terminal (extend.go)
	Stdout, Stderr io.Writer
	RawStdout      io.Writer // unredacted stdout (pipeline); nil: Stdout
	Getenv         func(string) string
	Environ        func() []string
	Hard           <-chan struct{} // closed on a second Ctrl-C
	Dir            string          // working directory ("" = the process's)
	// Build is which debussy this is; the zero value is the running
	// binary's (internal/buildinfo).
	Build buildinfo.Info

	logger   *slog.Logger // set once a command has chosen its log format
	jsonLogs bool         // and whether that format is JSON
}

// build is the Info of this debussy: Build, else the running binary's.
func (e *Env) build() buildinfo.Info {
	if e.Build.Version == "" {
		return buildinfo.Get()
	}
	return e.Build
}

// Run executes one debussy invocation and returns its exit code.
func (e *Env) Run(ctx context.Context, args []string) int {
	if _, ok := e.Stderr.(*lineEnd); !ok && e.Stderr != nil {
		e.Stderr = &lineEnd{w: e.Stderr}
	}
	app := e.app()
	notFound := false
	app.CommandNotFound = func(c *cli.Context, name string) {
		notFound = true
		if s := closest(name, commandNames(app)); s != "" {
			fmt.Fprintf(e.Stderr, "debussy: no command %q; did you mean %q? (see debussy --help)\n", name, s)
			return
		}
		fmt.Fprintf(e.Stderr, "debussy: no command %q (see debussy --help)\n", name)
	}
	if n := len(args); n >= 1 && args[n-1] == completeFlag {
		e.complete(app, args[1:n-1])
		return ExitOK
	}
	err := app.RunContext(ctx, reorderArgs(app, args))
	if err == nil && notFound {
		return ExitUsage
	}
	if err != nil {
		var shown *shownError
		var ended *runEndedError
		switch {
		case errors.As(err, &shown):
		case e.logger != nil && e.jsonLogs:
			// Once a run has its logger, stderr stays in its format (JSON in CI).
			attrs := []any{"err", loggedError(err), "exit_code", exitCode(err)}
			if errors.As(err, &ended) {
				attrs = append(attrs, "resume", ended.resume, "logs", ended.logs)
				if cmds := ended.answerCommands(); len(cmds) > 0 {
					attrs = append(attrs, "answer_with", cmds)
				}
			}
			e.logger.Error("debussy stopped", attrs...)
		case errors.As(err, &ended):
			// The summary above said what failed; this says what to do.
			fmt.Fprint(e.Stderr, ended.next())
		case e.jsonRequested(args):
			// A bad flag or config, before a logger was chosen: CI asked for
			// JSON-only stderr all the same.
			newLogger(e.Stderr, config.LogJSON, config.LevelError, true).Error("debussy stopped", "err", err, "exit_code", exitCode(err))
		default:
			startLine(e.Stderr)
			fmt.Fprintf(e.Stderr, "debussy: %v\n", err)
		}
	}
	return exitCode(err)
}

// loggedError is err as the log shows it where it carries structure only
// (public.Handler): a bad usage, config, plan or setup is debussy's own
// words about the user's files and machine, shown whole; a run's end says
// its public reason (a gate's name and exit code, never its output).
func loggedError(err error) any {
	var p public.Publisher
	switch {
	case exitCode(err) == ExitUsage:
		return public.OwnErr(err)
	case errors.As(err, &p):
		return err
	}
	return public.Words(orchestrator.PublicReason(err), err.Error())
}

// jsonRequested reports whether this invocation asked for JSON logs with
// --log-format json or DEBUSSY_LOG_FORMAT=json (a config file's log_format
// cannot be known when the config itself is the problem).
func (e *Env) jsonRequested(args []string) bool {
	for i, a := range args {
		if a == "--" {
			break
		}
		switch name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "="); {
		case name != "log-format" || a == name:
		case hasValue:
			return value == config.LogJSON
		case i+1 < len(args):
			return args[i+1] == config.LogJSON
		}
	}
	return e.Getenv != nil && e.Getenv(config.EnvVar("log_format")) == config.LogJSON
}

// shownError is an error whose message was already printed in full (e.g.
// plan findings); Run only maps it to an exit code.
type shownError struct{ err error }

func (s *shownError) Error() string { return s.err.Error() }
func (s *shownError) Unwrap() error { return s.err }

// signalContext returns a context cancelled by the first SIGINT/SIGTERM and a
// channel closed by the second: the first asks for a safe stop, the second
// for an immediate one. The signals stay caught until the process exits:
// with signal.Stop before the exit, a SIGTERM in that last moment killed
// debussy (exit -1, no summary) although its run had completed — seen in
// make chaos under -race, whose runtime takes a while to exit.
func signalContext() (context.Context, <-chan struct{}, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	hard := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for range sigs {
			n++
			switch n {
			case 1:
				cancel()
			case 2:
				close(hard)
			}
		}
	}()
	return ctx, hard, cancel
}

func (e *Env) app() *cli.App {
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version"}
	// --version and `debussy version` print the same line.
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintf(c.App.Writer, "debussy %s\n", c.App.Version) }
	usageError := func(c *cli.Context, err error, _ bool) error {
		return fmt.Errorf("%w: %w", ErrUsage, flagError(c, err))
	}
	app := &cli.App{
		Name:      "debussy",
		Usage:     "run long multi-phase coding plans through Claude Code without losing work",
		UsageText: "debussy run MASTER_PLAN.md [flags]\ndebussy check MASTER_PLAN.md [--json]\ndebussy status [--json] [--all]",
		Description: strings.TrimSpace(`
debussy runs each phase of a master plan as a streaming claude session. It watches the
session's real token usage and tool calls; before the context window fills it stops the
session between tools, commits the work, writes a checkpoint and starts a fresh session
that begins with it. It runs each phase's gates itself and resumes after Ctrl-C or a crash.

Words: a session is one run of claude on a phase; at the threshold (context_threshold)
the agent writes a handoff and a fresh session starts from a checkpoint. A zone (green,
yellow, red) rates a session's tool calls, large reads and delegations; a nudge is a note
about the agent's own loop; a gate is a command that must pass; a quarter is an adaptive
budget's check of tasks done against budget used.

Exit codes: 0 all phases completed, 1 a phase failed or was blocked, 2 bad usage, config,
plan or setup (login, permissions, an unreachable API, a missing claude), 75 a usage
limit outlasts usage_limit_wait (work committed; run again after the reset), 130
interrupted (work committed; run again to resume).`),
		Version:              version(),
		Writer:               e.Stdout,
		ErrWriter:            e.Stderr,
		EnableBashCompletion: true, // see `debussy completion`
		Suggest:              true, // "did you mean": flagError and CommandNotFound word it
		// The default handler calls os.Exit inside Run; exit codes are mapped in Main.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   usageError,
		Commands: []*cli.Command{
			e.runCommand(),
			e.checkCommand(),
			e.statusCommand(),
			e.doctorCommand(),
			e.logsCommand(),
			e.reportCommand(),
			e.exportCommand(),
			e.tuneCommand(),
			e.matrixCommand(),
			e.pipelineCommand(),
			e.collectCommand(),
			e.doneCommand(),
			e.answerCommand(),
			e.progressCommand(),
			e.handoffCommand(),
			e.initCommand(),
			e.configCommand(),
			e.completionCommand(),
			{
				Name:  "version",
				Usage: "print the version",
				Action: func(c *cli.Context) error {
					fmt.Fprintf(e.Stdout, "debussy %s\n", version())
					return nil
				},
			},
		},
	}
	// A bad flag is a usage error (exit 2) in every command, not just the app.
	for _, c := range app.Commands {
		c.OnUsageError = usageError
		// No `debussy run help`: completion would offer it instead of files.
		c.HideHelpCommand = true
	}
	return app
}

// usageErr makes a usage error for a command, with the hint to its help.
func usageErr(c *cli.Context, format string, a ...any) error {
	return fmt.Errorf("%w: %s (see debussy %s --help)", ErrUsage, fmt.Sprintf(format, a...), c.Command.Name)
}

// oneArg returns the single positional argument a command needs.
func oneArg(c *cli.Context, what string) (string, error) {
	switch c.NArg() {
	case 1:
		return c.Args().First(), nil
	case 0:
		return "", usageErr(c, "missing %s", what)
	default:
		return "", usageErr(c, "expected one %s, got %d arguments: %s", what, c.NArg(), strings.Join(c.Args().Slice(), " "))
	}
}

// flagKeys maps a flag to its config key where the names differ; the
// others are the key with dashes.
var flagKeys = map[string]string{
	"budget-cost":   "budget.phase.cost_usd",
	"budget-tokens": "budget.phase.tokens",
}

// invalidFlag is urfave/cli's message for a flag value its parser rejects.
var invalidFlag = regexp.MustCompile(`^invalid value "(.*)" for flag -([\w-]+): `)

// flagError rewrites a flag value urfave/cli could not parse the way a
// config error reads: the flag, the value, and what is allowed (the
// config key's rule). Other usage errors pass through.
func flagError(c *cli.Context, err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		help := "debussy --help"
		if c != nil && c.Command != nil && c.Command.Name != "" && c.Command.Name != c.App.Name {
			help = "debussy " + c.Command.Name + " --help"
		}
		name = strings.TrimLeft(name, "-")
		if c != nil {
			if s := closest(name, flagNames(c)); s != "" {
				return fmt.Errorf("unknown flag %s; did you mean %s? (%s lists the flags)", dashed(name), dashed(s), help)
			}
		}
		return fmt.Errorf("unknown flag %s (%s lists the flags)", dashed(name), help)
	}
	if name, ok := strings.CutPrefix(err.Error(), "flag needs an argument: -"); ok {
		name = strings.TrimLeft(name, "-")
		return fmt.Errorf("--%s needs a value: --%s VALUE, or --%s=VALUE", name, name, name)
	}
	m := invalidFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	value, name := m[1], m[2]
	problem := fmt.Sprintf("%q is not a valid value", value)
	if c != nil && c.Command != nil {
		for _, f := range c.Command.Flags {
			if !slices.Contains(f.Names(), name) {
				continue
			}
			switch f.(type) {
			case *cli.IntFlag, *cli.Int64Flag:
				problem = fmt.Sprintf("%q is not an integer", value)
			case *cli.Float64Flag:
				problem = fmt.Sprintf("%q is not a number", value)
			case *cli.DurationFlag:
				problem = fmt.Sprintf("%q is not a duration", value)
			case *cli.BoolFlag:
				problem = fmt.Sprintf("%q is not true or false", value)
			}
		}
	}
	msg := fmt.Sprintf("--%s: %s", name, problem)
	key, ok := flagKeys[name]
	if !ok {
		key = strings.ReplaceAll(name, "-", "_")
	}
	if allowed := config.Allowed(key); allowed != "" {
		msg += "; allowed: " + allowed
	}
	return errors.New(msg)
}

// plural is "1 gate", "2 gates".
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}
