package commands

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/runner"
)

// loginPrompt is the one question doctor's login check asks the model.
const loginPrompt = "debussy doctor is checking that this login works. Reply with the single word OK and use no tool."

// loginFinding starts one short session as a run starts its sessions
// (same binary, model, permission mode, environment) and reads its ending
// with the run's own classification: a missing login, a refused key, a
// usage limit or an unreachable API show here as in a run — not after a
// night's first session. It costs one small API request (none when claude
// is not logged in: it answers by itself).
func loginFinding(ctx context.Context, spec runner.Spec, timeout time.Duration) finding {
	spec.Prompt = loginPrompt
	spec.ExtraArgs = append(slices.Clone(spec.ExtraArgs), "--max-turns", "1")
	spec.IdleTimeout, spec.SessionTimeout = timeout, timeout
	sess, err := runner.Start(ctx, spec)
	if err != nil {
		return finding{"FAIL", "login", "start claude: " + err.Error(), "install Claude Code or set claude_bin"}
	}
	for ev := range sess.Events() {
		if ev.Hook != nil {
			ev.Hook.Answer(runner.HookAnswer{})
		}
	}
	out := sess.Wait()
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
