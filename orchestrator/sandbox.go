package orchestrator

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/prompt"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/sandbox"
)

// A bounded run (Options.Sandbox) runs each phase's claude sessions and
// gates inside the sandbox, within the phase's scope: its tree, the run's
// state dir, the git dirs a worktree's git writes to.

// sandboxScope is what phase p may write beyond the boundary's own places:
// worked out once, when its claude command is made (GitCode asks git).
func (p *phaseRun) sandboxScope() sandbox.Scope {
	if p.start.box != nil {
		return p.start.box.scope
	}
	dir, store := p.start.dir, p.files.store
	return sandbox.Scope{Name: p.ph.ID, Work: dir, State: store.Dir, Run: store.RunDir(p.files.run), Git: sandbox.GitDirs(dir), ReadOnly: sandbox.GitCode(dir)}
}

// prepareSandbox makes the phase's claude command for a bounded run, and
// the phase prompt that tells the agent what is bounded; nothing when the
// run is not bounded.
func (p *phaseRun) prepareSandbox() error {
	box := p.launch.sandbox
	if box == nil {
		return nil
	}
	scope := p.sandboxScope()
	cmd, err := box.Claude(scope)
	if err != nil {
		return fmt.Errorf("%w: phase %s: %w", ErrSetup, p.ph.ID, err)
	}
	extra, settings, err := sandbox.SplitSettings(p.cfg.ExtraArgs, p.start.dir)
	if err != nil {
		return fmt.Errorf("%w: phase %s: %w", ErrSetup, p.ph.ID, err)
	}
	settings["sandbox"] = cmd.Settings
	p.start.box = &boxedClaude{wrapper: cmd.Wrapper, env: cmd.Env, extraArgs: extra, settings: settings, scope: scope}
	pol := box.Policy()
	p.start.basePrompt = prompt.PhaseIn(p.start.plan, p.ph, phaseFile(p.start.root, p.ph), &prompt.Bounds{Write: pol.Write, Domains: pol.AllowDomains})
	return nil
}

// box puts spec inside the phase's sandbox, if the run is bounded.
func (p *phaseRun) box(spec *runner.Spec) {
	b := p.start.box
	if b == nil {
		return
	}
	spec.Wrapper = b.wrapper
	spec.ExtraArgs = b.extraArgs
	settings := maps.Clone(b.settings)
	maps.Copy(settings, spec.Settings)
	settings["sandbox"] = b.settings["sandbox"]
	spec.Settings = settings
	if spec.SetEnv == nil {
		spec.SetEnv = map[string]string{}
	}
	maps.Copy(spec.SetEnv, b.env)
}

// boundaryChecks are the policy's and the session's views of the phase's
// sandbox: nil funcs when the run is not bounded.
func (p *phaseRun) boundaryChecks() (func(policy.Call) string, func(string, json.RawMessage, string) string) {
	box := p.launch.sandbox
	if box == nil {
		return nil, nil
	}
	checks := box.Checks(p.sandboxScope())
	return func(c policy.Call) string { return checks.Refusal(c.Tool, c.Input) }, checks.Refused
}

// gateCommand is how the phase's gates run: inside the sandbox when the
// run is bounded (the wrapper, and env with the sandbox's variables).
func (p *phaseRun) gateCommand(env []string) ([]string, []string, error) {
	box := p.launch.sandbox
	if box == nil {
		return nil, env, nil
	}
	cmd, err := box.Gate(p.sandboxScope())
	if err != nil {
		return nil, env, fmt.Errorf("sandbox the gate: %w", err)
	}
	if env == nil {
		env = os.Environ() // gate.Run's default
	}
	return cmd.Wrapper, withEnv(env, cmd.Env), nil
}

// withEnv is env with set's variables replacing or added, in key order.
func withEnv(env []string, set map[string]string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, replaced := set[k]
		return replaced
	})
	for _, k := range slices.Sorted(maps.Keys(set)) {
		out = append(out, k+"="+set[k])
	}
	return out
}
