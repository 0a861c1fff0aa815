package commands

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/sandbox"
)

// sandboxFlag is --sandbox on run and check.
func sandboxFlag() cli.Flag {
	return &cli.StringFlag{Name: "sandbox", DefaultText: "auto",
		Usage: "`MODE`: auto bounds the agent's tools and the gates where the machine can (bubblewrap and socat), on refuses to run unbounded, off runs unbounded (sandbox)"}
}

// sandboxPolicy is the configuration's boundary.
func sandboxPolicy(cfg config.Config) sandbox.Policy {
	return sandbox.Policy{Write: cfg.SandboxWrite, DenyRead: cfg.SandboxDenyRead, AllowDomains: cfg.SandboxAllowDomains}
}

// sandboxCheck decides the run's boundary for cfg on this machine: what it
// offers, and the decision. err wraps orchestrator.ErrSetup (exit 2) when
// sandbox: on meets a machine that cannot bound the run.
func (e *Env) sandboxCheck(ctx context.Context, cfg config.Config, root string) (sandbox.Availability, sandbox.Decision, error) {
	mode := sandbox.Mode(cfg.Sandbox)
	var a sandbox.Availability
	if mode != sandbox.Off {
		a = sandbox.Check(ctx, sandbox.Host{Path: e.Getenv("PATH"), Root: os.Geteuid() == 0, Places: e.sandboxPlaces(root)})
	}
	d, err := sandbox.Decide(mode, a, sandboxPolicy(cfg))
	if err != nil {
		return a, d, fmt.Errorf("%w: %w", orchestrator.ErrSetup, err)
	}
	return a, d, nil
}

// sandboxPlaces are what the agent's commands must see inside the
// boundary: the repository, debussy's own executable (`debussy done`), and
// HOME (claude's config dir).
func (e *Env) sandboxPlaces(root string) []sandbox.Place {
	places := []sandbox.Place{{What: "the repository", Path: root}, {What: "HOME", Path: e.Getenv("HOME")}}
	if exe, err := os.Executable(); err == nil {
		places = append(places, sandbox.Place{What: "debussy's executable", Path: exe})
	}
	return places
}

// cliSandboxNote is the caveat of this claude's own sandbox, "" when none.
func cliSandboxNote(cfg config.Config) string {
	bin, err := runner.LookPath(cfg.ClaudeBin)
	if err != nil {
		return ""
	}
	return sandbox.CLIHelperProblem(bin)
}

// openSandbox makes the run's boundary when d bounds it; nil otherwise.
// Making it can still fail (no usable HOME, an unwritable temp dir): under
// auto the run then goes on unbounded, and d says so.
func (e *Env) openSandbox(a sandbox.Availability, d *sandbox.Decision, cfg config.Config) (*sandbox.Boundary, error) {
	if !d.Bounded {
		return nil, nil
	}
	b, err := sandbox.New(a, sandbox.Options{Policy: sandboxPolicy(cfg), Getenv: e.Getenv, Root: os.Geteuid() == 0,
		CLIHelperBroken: cliSandboxNote(cfg) != ""})
	switch {
	case err == nil:
		return b, nil
	case sandbox.Mode(cfg.Sandbox) == sandbox.On:
		return nil, fmt.Errorf("%w: sandbox: on, but %w", orchestrator.ErrSetup, err)
	}
	*d = sandbox.Decision{Line: "sandbox auto: this run is NOT bounded: " + err.Error()}
	return nil, nil
}

// logBoundary says, among the run's first lines, which boundary is in
// force: a warning when auto could not bound the run.
func logBoundary(logger *slog.Logger, d sandbox.Decision, cfg config.Config) {
	if d.Bounded || sandbox.Mode(cfg.Sandbox) == sandbox.Off {
		logger.Info(d.Line)
	} else {
		logger.Warn(d.Line)
	}
	if note := cliSandboxNote(cfg); d.Bounded && note != "" {
		logger.Warn("sandbox: " + note)
	}
}

// sandboxFindings are doctor's lines on the boundary a run would have.
func (e *Env) sandboxFindings(ctx context.Context, cfg config.Config, root string) []finding {
	_, d, err := e.sandboxCheck(ctx, cfg, root)
	switch {
	case err != nil:
		why, fix, _ := strings.Cut(strings.TrimPrefix(err.Error(), orchestrator.ErrSetup.Error()+": "), ": install ")
		if fix != "" {
			fix = "install " + fix
		}
		return []finding{{"FAIL", "sandbox", why, fix}}
	case d.Bounded:
		fs := []finding{{"ok", "sandbox", d.Line, ""}}
		if note := cliSandboxNote(cfg); note != "" {
			fs = append(fs, finding{"warn", "sandbox", note, ""})
		}
		return fs
	case sandbox.Mode(cfg.Sandbox) == sandbox.Off:
		return []finding{{"ok", "sandbox", d.Line, ""}}
	}
	return []finding{{"warn", "sandbox", d.Line, "install bubblewrap and socat (" + sandbox.Install + ") to bound the run"}}
}
