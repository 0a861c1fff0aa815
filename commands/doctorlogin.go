package commands

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/runner"
)

// loginPrompt is the one question doctor's login check asks the model.
const loginPrompt = "debussy doctor is checking that this login works. Reply with the single word OK and use no tool."

// loginFindings start one short session as a run starts its sessions
// (same binary, model, permission mode, environment) and read its ending
// with the run's own classification: a missing login, a refused key, a
// usage limit or an unreachable API show here as in a run — not after a
// night's first session. It costs one small API request (none when claude
// is not logged in: it answers by itself). claude's word that some of the
// user's settings did not load (2.1.330+) is a warning beside it; that
// debussy's own did not, a FAIL (the login's outcome says it).
func loginFindings(ctx context.Context, spec runner.Spec, timeout time.Duration) []finding {
	spec.Prompt = loginPrompt
	spec.ExtraArgs = append(slices.Clone(spec.ExtraArgs), "--max-turns", "1")
	spec.IdleTimeout, spec.SessionTimeout = timeout, timeout
	sess, err := runner.Start(ctx, spec)
	if err != nil {
		// The error says "start claude:" already.
		return []finding{{"FAIL", "login", err.Error(), "install Claude Code or set claude_bin"}}
	}
	var fs []finding
	for ev := range sess.Events() {
		if ev.Hook != nil {
			ev.Hook.Answer(runner.HookAnswer{})
		}
		if f, ok := settingsFinding(ev); ok && !slices.Contains(fs, f) {
			fs = append(fs, f)
		}
	}
	return append(fs, outcomeFinding(sess.Wait(), timeout))
}

// settingsFinding is claude's settings_not_in_effect line about the
// user's own settings, as doctor says it.
func settingsFinding(ev runner.Event) (finding, bool) {
	s := ev.System
	if ev.Kind != runner.KindSystem || s == nil || s.Tag != event.SettingsNotInEffect || runner.NamesDebussySettings(s.Content) {
		return finding{}, false
	}
	return finding{"warn", "config", "claude says some of your settings did not load and are not in effect: " + text.OneLine(s.Content, 300),
		"fix the settings file it names (~/.claude/settings.json, .claude/settings.json or .claude/settings.local.json): they act in debussy's sessions too"}, true
}

// outcomeFinding reads the login session's ending.
func outcomeFinding(out runner.Outcome, timeout time.Duration) finding {
	// Every refused outcome carries its class (runner's classified).
	f := out.Failure
	switch f.Class {
	case failure.None:
		if out.Kind == runner.OutcomeIdleTimeout || out.Kind == runner.OutcomeSessionTimeout {
			return finding{"warn", "login", fmt.Sprintf("no answer from the API within %s", timeout), "try again with a longer --timeout"}
		}
		return finding{"ok", "login", "a short session got its answer from the API (one small request)", ""}
	case failure.UsageLimit:
		return finding{"warn", "login", fmt.Sprintf("logged in, but the %s limit is reached: %s", failure.LimitName(f.LimitType), f.Reason),
			"a run waits for the reset when it is within usage_limit_wait (default 6h), else ends with exit 75"}
	case failure.Overloaded, failure.Other, failure.Crashed, failure.PromptTooLong:
		return finding{"warn", "login", string(f.Class) + ": " + f.Reason, "a run retries this; run doctor again later"}
	}
	return finding{"FAIL", "login", f.Reason, f.Fix}
}

// billingFinding says in one line how claude -p (every debussy session) is
// billed for the login the environment shows: an API key's account per
// token, or a subscription's plan limits.
func billingFinding(getenv func(string) string) finding {
	switch {
	case getenv("ANTHROPIC_API_KEY") != "" && getenv("CLAUDE_CODE_OAUTH_TOKEN") == "":
		return finding{"ok", "billing", "ANTHROPIC_API_KEY: each session's tokens are billed to the key's account (the run's cost is that bill)", ""}
	case getenv("ANTHROPIC_BASE_URL") != "" && getenv("CLAUDE_CODE_OAUTH_TOKEN") == "":
		return finding{"ok", "billing", "ANTHROPIC_BASE_URL is set: billed by whatever serves it", ""}
	}
	return finding{"ok", "billing", "a subscription login (Pro/Max): `claude -p`, so every debussy session, draws on your plan's usage limits like interactive use " +
		"(Anthropic announced moving -p and Agent SDK use to a separate monthly credit, then paused it, promising notice first)", ""}
}
