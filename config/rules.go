package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/secrets"
)

// The rules each key must follow, and the errors that report a broken one with its file:line or variable.

// FieldError is one problem with one key. File/Line/Column or EnvVar say
// where the value came from when it is known.
type FieldError struct {
	Key     string
	Problem string // what is wrong, including the offending value
	Allowed string // what would be accepted
	File    string
	Line    int
	Column  int
	EnvVar  string
}

func (e *FieldError) Error() string {
	var b strings.Builder
	switch {
	case e.File != "":
		fmt.Fprintf(&b, "%s:%d:%d: %s: ", e.File, e.Line, e.Column, e.Key)
	case e.EnvVar != "":
		fmt.Fprintf(&b, "%s: ", e.EnvVar)
	default:
		fmt.Fprintf(&b, "%s: ", e.Key)
	}
	b.WriteString(e.Problem)
	if e.Allowed != "" {
		fmt.Fprintf(&b, "; allowed: %s", e.Allowed)
	}
	return b.String()
}

func (e *FieldError) Unwrap() error { return ErrInvalid }

// invalidError carries a message that is already complete (a YAML syntax
// error with its position, an unreadable file) while matching ErrInvalid and
// the underlying cause.
type invalidError struct {
	msg   string
	cause error
}

func (e *invalidError) Error() string { return e.msg }

func (e *invalidError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, e.cause}
}

// rule says what a key accepts and checks the resolved value.
type rule struct {
	allowed string
	check   func(c *Config) string // "" when the value is fine, else the problem
	// compares names the other keys check reads. When this key keeps its
	// default and one of those was set, the problem is the set key's, and is
	// reported where that key was set: a default has no file:line.
	compares []string
}

// reservedArgs are claude flags debussy sets itself; passing them again
// through extra_args would break the stream protocol or contradict a key.
func reservedArgs() []string {
	return []string{"-p", "--print", "--output-format", "--input-format", "--model", "--permission-mode"}
}

func rules() map[string]rule {
	reserved := reservedArgs()
	const durationAllowed = `a Go duration greater than 0, e.g. "90s", "10m", "2h"`
	nonNegative := func(get func(c *Config) int) func(c *Config) string {
		return func(c *Config) string {
			if v := get(c); v < 0 {
				return fmt.Sprintf("%d is negative", v)
			}
			return ""
		}
	}
	// zeroOrTokens: 0 (off, or detected) or a token count of at least 1000.
	zeroOrTokens := func(get func(c *Config) int) func(c *Config) string {
		return func(c *Config) string {
			if v := get(c); v != 0 && v < 1000 {
				return fmt.Sprintf("%d is out of range", v)
			}
			return ""
		}
	}
	positive := func(get func(c *Config) Duration) func(c *Config) string {
		return func(c *Config) string {
			if v := get(c); v <= 0 {
				return fmt.Sprintf("%s is not greater than 0", v)
			}
			return ""
		}
	}
	oneOf := func(get func(c *Config) string, allowed ...string) func(c *Config) string {
		return func(c *Config) string {
			if v := get(c); !slices.Contains(allowed, v) {
				return fmt.Sprintf("%q is not one of the allowed values", v)
			}
			return ""
		}
	}
	// zone checks one threshold of a yellow/red pair; 0 disables either.
	zone := func(get func(c *Config) (yellow, red int), isYellow bool, partner string) rule {
		r := rule{allowed: "an integer >= 0 (0 disables it); yellow below red when both are set", compares: []string{partner}}
		r.check = func(c *Config) string {
			y, rd := get(c)
			v := rd
			if isYellow {
				v = y
			}
			switch {
			case v < 0:
				return fmt.Sprintf("%d is negative", v)
			case isYellow && y > 0 && rd > 0 && y >= rd:
				return fmt.Sprintf("%d is not below the red threshold %d", y, rd)
			}
			return ""
		}
		return r
	}
	const limitAllowed = "0 (no limit) or "
	limitTokens := func(get func(c *Config) int64) rule {
		return rule{allowed: limitAllowed + "a number of tokens > 0 (input, output and cache of every API call)", check: func(c *Config) string {
			if v := get(c); v < 0 {
				return fmt.Sprintf("%d is negative", v)
			}
			return ""
		}}
	}
	limitCost := func(get func(c *Config) float64) rule {
		return rule{allowed: limitAllowed + "a cost in USD > 0, e.g. 2.50", check: func(c *Config) string {
			if v := get(c); !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Sprintf("%v is not a cost", v)
			}
			return ""
		}}
	}
	limitDuration := func(get func(c *Config) Duration) rule {
		return rule{allowed: limitAllowed + `a Go duration > 0, e.g. "45m"`, check: func(c *Config) string {
			if v := get(c); v < 0 {
				return fmt.Sprintf("%s is negative", v)
			}
			return ""
		}}
	}
	enforcements := []string{EnforceStrict, EnforceAdvisory, EnforceSoft, EnforceAdaptive}
	// adaptiveOnly checks a fraction that only adaptive enforcement reads:
	// changing it under another mode would silently do nothing.
	adaptiveOnly := func(get func(c *Config) float64, def float64, what string) rule {
		return rule{
			allowed: fmt.Sprintf("a %s from 0 to 1 (default %v), only with enforcement: adaptive", what, def),
			check: func(c *Config) string {
				v := get(c)
				switch {
				case !(v > 0 && v <= 1):
					return fmt.Sprintf("%v is out of range", v)
				case v != def && c.Budget.Enforcement != EnforceAdaptive:
					return fmt.Sprintf("%v is set but enforcement is %q, not adaptive", v, c.Budget.Enforcement)
				}
				return ""
			},
		}
	}
	rs := map[string]rule{
		"claude_bin": {
			allowed: "the claude command name (looked up on PATH) or a path to it",
			check: func(c *Config) string {
				if strings.TrimSpace(c.ClaudeBin) == "" {
					return "is empty"
				}
				return ""
			},
		},
		"model": {allowed: `any model name the claude CLI accepts, e.g. "claude-sonnet-4-5" or "opus"; "" uses the CLI default`},
		"permission_mode": {
			allowed: strings.Join([]string{PermissionBypass, PermissionAcceptEdits, PermissionDefault, PermissionPlan}, ", "),
			check: oneOf(func(c *Config) string { return c.PermissionMode },
				PermissionBypass, PermissionAcceptEdits, PermissionDefault, PermissionPlan),
		},
		"context_threshold": {
			allowed: "an integer from 1 to 100 (percent of the context window; 100 disables the trigger)",
			check: func(c *Config) string {
				if v := c.ContextThreshold; v < 1 || v > 100 {
					return fmt.Sprintf("%d is out of range", v)
				}
				return ""
			},
		},
		"tool_call_threshold": {
			allowed: "an integer >= 0 (0: only for streams without usage, at 150 calls)",
			check:   nonNegative(func(c *Config) int { return c.ToolCallThreshold }),
		},
		"max_restarts": {
			allowed: "an integer >= 0 (0 disables restarts)",
			check:   nonNegative(func(c *Config) int { return c.MaxRestarts }),
		},
		"context_window": {
			allowed: "0 (detect from the model) or an integer >= 1000 (tokens)",
			check:   zeroOrTokens(func(c *Config) int { return c.ContextWindow }),
		},
		"context_max_tokens": {
			allowed: "0 (off) or an integer >= 1000 (tokens of context at which a session hands off, whatever the window)",
			check:   zeroOrTokens(func(c *Config) int { return c.ContextMaxTokens }),
		},
		"max_retries": {
			allowed: "an integer >= 0",
			check:   nonNegative(func(c *Config) int { return c.MaxRetries }),
		},
		"retry_backoff": {
			allowed: durationAllowed,
			check:   positive(func(c *Config) Duration { return c.RetryBackoff }),
		},
		"require_done_signal": {allowed: "true or false"},
		"session_timeout": {
			allowed: durationAllowed,
			check:   positive(func(c *Config) Duration { return c.SessionTimeout }),
		},
		"idle_timeout": {
			allowed: durationAllowed,
			check:   positive(func(c *Config) Duration { return c.IdleTimeout }),
		},
		"gate_timeout": {
			allowed: durationAllowed,
			check:   positive(func(c *Config) Duration { return c.GateTimeout }),
		},
		"stop_grace": {
			allowed: durationAllowed,
			check:   positive(func(c *Config) Duration { return c.StopGrace }),
		},
		"handoff": {allowed: "true or false"},
		"handoff_grace_calls": {
			allowed: "an integer >= 0 (tool calls the agent gets to write its handoff; 0: no limit by calls)",
			check:   nonNegative(func(c *Config) int { return c.HandoffGraceCalls }),
		},
		"handoff_grace_time": {
			allowed: durationAllowed,
			check:   positive(func(c *Config) Duration { return c.HandoffGraceTime }),
		},
		"allow_compaction":        {allowed: "true or false"},
		"zone_tool_calls_yellow":  zone(func(c *Config) (int, int) { return c.ZoneToolCallsYellow, c.ZoneToolCallsRed }, true, "zone_tool_calls_red"),
		"zone_tool_calls_red":     zone(func(c *Config) (int, int) { return c.ZoneToolCallsYellow, c.ZoneToolCallsRed }, false, "zone_tool_calls_yellow"),
		"zone_large_reads_yellow": zone(func(c *Config) (int, int) { return c.ZoneLargeReadsYellow, c.ZoneLargeReadsRed }, true, "zone_large_reads_red"),
		"zone_large_reads_red":    zone(func(c *Config) (int, int) { return c.ZoneLargeReadsYellow, c.ZoneLargeReadsRed }, false, "zone_large_reads_yellow"),
		"zone_delegations_yellow": zone(func(c *Config) (int, int) { return c.ZoneDelegationsYellow, c.ZoneDelegationsRed }, true, "zone_delegations_red"),
		"zone_delegations_red":    zone(func(c *Config) (int, int) { return c.ZoneDelegationsYellow, c.ZoneDelegationsRed }, false, "zone_delegations_yellow"),
		"zone_action": {
			allowed: ZoneActionNote + " (tell the agent its zone) or " + ZoneActionHandoff + " (a red zone asks for the handoff)",
			check:   oneOf(func(c *Config) string { return c.ZoneAction }, ZoneActionNote, ZoneActionHandoff),
		},
		"nudge_repeat": {
			allowed: "an integer >= 2 or 0 (0 disables the doom-loop nudge)",
			check: func(c *Config) string {
				if v := c.NudgeRepeat; v < 0 || v == 1 {
					return fmt.Sprintf("%d is out of range", v)
				}
				return ""
			},
		},
		"nudge_repeat_window": {
			compares: []string{"nudge_repeat", "nudge_repeat_restart"},
			allowed:  "an integer >= nudge_repeat and >= nudge_repeat_restart (main-thread tool calls looked back on)",
			check: func(c *Config) string {
				if v := c.NudgeRepeatWindow; v < c.NudgeRepeat || v < c.NudgeRepeatRestart || v < 1 {
					return fmt.Sprintf("%d is smaller than nudge_repeat (%d) or nudge_repeat_restart (%d), or below 1", v, c.NudgeRepeat, c.NudgeRepeatRestart)
				}
				return ""
			},
		},
		"nudge_repeat_restart": {
			compares: []string{"nudge_repeat"},
			allowed:  "0 (never restart for a doom loop) or an integer greater than nudge_repeat",
			check: func(c *Config) string {
				if v := c.NudgeRepeatRestart; v < 0 || (v > 0 && v <= c.NudgeRepeat) {
					return fmt.Sprintf("%d is not greater than nudge_repeat (%d)", v, c.NudgeRepeat)
				}
				return ""
			},
		},
		"nudge_explore_reads": {
			allowed: "an integer >= 0 (0 disables the exploration nudge)",
			check:   nonNegative(func(c *Config) int { return c.NudgeExploreReads }),
		},
		"nudge_cooldown": {
			allowed: "an integer >= 0 (tool calls between two nudges of one kind)",
			check:   nonNegative(func(c *Config) int { return c.NudgeCooldown }),
		},
		"budget.phase.tokens":               limitTokens(func(c *Config) int64 { return c.Budget.Phase.Tokens }),
		"budget.phase.cost_usd":             limitCost(func(c *Config) float64 { return c.Budget.Phase.CostUSD }),
		"budget.phase.duration":             limitDuration(func(c *Config) Duration { return c.Budget.Phase.Duration }),
		"budget.plan.tokens":                limitTokens(func(c *Config) int64 { return c.Budget.Plan.Tokens }),
		"budget.plan.cost_usd":              limitCost(func(c *Config) float64 { return c.Budget.Plan.CostUSD }),
		"budget.plan.duration":              limitDuration(func(c *Config) Duration { return c.Budget.Plan.Duration }),
		"budget.enforcement":                {allowed: strings.Join(enforcements, ", "), check: oneOf(func(c *Config) string { return c.Budget.Enforcement }, enforcements...)},
		"budget.restart_threshold":          adaptiveOnly(func(c *Config) float64 { return c.Budget.RestartThreshold }, Defaults().Budget.RestartThreshold, "fraction of the phase budget"),
		"budget.min_completion_probability": adaptiveOnly(func(c *Config) float64 { return c.Budget.MinCompletionProbability }, Defaults().Budget.MinCompletionProbability, "probability"),
		"budget.max_extensions": {
			allowed: "an integer >= 0 (extensions a terminal user may grant when a budget runs out; never asked in CI or without a terminal)",
			check:   nonNegative(func(c *Config) int { return c.Budget.MaxExtensions }),
		},
		"budget.prices": {
			allowed: "a mapping of model id prefix to {input, output, cache_write, cache_read} in USD per million tokens, input and output > 0, e.g. {claude-opus-4-8: {input: 5, output: 25, cache_write: 6.25, cache_read: 0.5}}",
			check: func(c *Config) string {
				var bad []string
				for _, name := range slices.Sorted(maps.Keys(c.Budget.Prices)) {
					p := c.Budget.Prices[name]
					switch {
					case strings.TrimSpace(name) == "":
						bad = append(bad, "a price has an empty model name")
					case !(p.Input > 0) || !(p.Output > 0) || !(p.CacheWrite >= 0) || !(p.CacheRead >= 0) || math.IsInf(p.Input+p.Output+p.CacheWrite+p.CacheRead, 0):
						bad = append(bad, fmt.Sprintf("price of %q: input and output must be > 0, cache prices >= 0", name))
					}
				}
				return strings.Join(bad, ", ")
			},
		},
		"auto_commit": {allowed: "true or false"},
		"allow_dirty": {allowed: "true or false"},
		"strict_git":  {allowed: "true or false"},
		"parallel": {
			allowed: "an integer from 1 to 64 (phases run at the same time; 1 runs them one by one, in the work tree)",
			check: func(c *Config) string {
				if v := c.Parallel; v < 1 || v > 64 {
					return fmt.Sprintf("%d is out of range", v)
				}
				return ""
			},
		},
		"worktree_setup": {
			allowed: `a shell command run in each new phase worktree before its first session, e.g. "npm ci"; "" runs nothing`,
			check: func(c *Config) string {
				if c.WorktreeSetup != "" && strings.TrimSpace(c.WorktreeSetup) == "" {
					return "is blank"
				}
				return ""
			},
		},
		"worktree_setup_timeout": {
			allowed: durationAllowed,
			check:   positive(func(c *Config) Duration { return c.WorktreeSetupTimeout }),
		},
		"strict_gates": {allowed: "true or false"},
		"gate_commands": {
			allowed: `a mapping of gate name to shell command, e.g. {test: "go test ./..."}`,
			check: func(c *Config) string {
				var bad []string
				for _, name := range slices.Sorted(maps.Keys(c.GateCommands)) {
					switch {
					case strings.TrimSpace(name) == "":
						bad = append(bad, "a gate has an empty name")
					case strings.TrimSpace(c.GateCommands[name]) == "":
						bad = append(bad, fmt.Sprintf("gate %q has an empty command", name))
					}
				}
				return strings.Join(bad, ", ")
			},
		},
		"fallback_model": {allowed: `a model name the claude CLI accepts, used once a limit holds for the configured model only (seven_day_opus); "" waits instead`},
		"allowed_tools": {
			allowed: `a list of claude permission rules passed as --allowedTools, e.g. ["Bash", "Bash(npm test:*)", "Edit"]`,
			check: func(c *Config) string {
				for _, t := range c.AllowedTools {
					if strings.TrimSpace(t) == "" {
						return "an empty entry"
					}
				}
				return ""
			},
		},
		"usage_limit_wait": {
			allowed: `a Go duration >= 0, e.g. "6h"; 0 does not wait`,
			check: func(c *Config) string {
				if c.UsageLimitWait < 0 {
					return fmt.Sprintf("%s is negative", c.UsageLimitWait)
				}
				return ""
			},
		},
		"extra_args": {
			allowed: "a list of extra claude CLI arguments, except " + strings.Join(reserved, ", ") + " (debussy sets those)",
			check: func(c *Config) string {
				var bad []string
				for _, a := range c.ExtraArgs {
					name, _, _ := strings.Cut(a, "=")
					if slices.Contains(reserved, name) {
						bad = append(bad, fmt.Sprintf("%q is set by debussy", a))
					}
				}
				return strings.Join(bad, ", ")
			},
		},
		"redact_allow": {
			allowed: `a list of values that are not secrets: literals, or regular expressions between slashes, e.g. ["test-token-123", "/^sk-test-[a-z]+$/"]`,
			check: func(c *Config) string {
				var bad []string
				for _, a := range c.RedactAllow {
					if _, _, err := secrets.ParseAllow(a); err != nil {
						bad = append(bad, err.Error())
					}
				}
				return strings.Join(bad, ", ")
			},
		},
		"notify": {
			allowed: `a list of {kind: webhook|ntfy|slack, url: http(s)://…} or {kind: command, command: [program, args…]}, each with optional events: [` +
				strings.Join(NotifyEvents(), ", ") + `] and timeout: a Go duration (default 5s, at most 10s)`,
			check: func(c *Config) string {
				var bad []string
				for i, n := range c.Notify {
					if p := n.problem(); p != "" {
						bad = append(bad, fmt.Sprintf("entry %d: %s", i+1, p))
					}
				}
				return strings.Join(bad, "; ")
			},
		},
		"redact_deny": {
			allowed: `a list of values always redacted: literals, or regular expressions between slashes, e.g. ["corp-internal-42", "/\\bACME-[0-9]{6}\\b/"]`,
			check: func(c *Config) string {
				var bad []string
				for _, d := range c.RedactDeny {
					if _, _, err := secrets.ParseDeny(d); err != nil {
						bad = append(bad, err.Error())
					}
				}
				return strings.Join(bad, ", ")
			},
		},
		"log_format": {
			allowed: LogText + ", " + LogJSON,
			check:   oneOf(func(c *Config) string { return c.LogFormat }, LogText, LogJSON),
		},
		"log_text": {allowed: "true or false"},
		"log_level": {
			allowed: strings.Join([]string{LevelDebug, LevelInfo, LevelWarn, LevelError}, ", "),
			check:   oneOf(func(c *Config) string { return c.LogLevel }, LevelDebug, LevelInfo, LevelWarn, LevelError),
		},
	}
	maps.Copy(rs, sandboxRules())
	return rs
}

// Validate reports every problem of the resolved configuration at once,
// joined with errors.Join; each is a *FieldError wrapping ErrInvalid.
func (c Config) Validate() error {
	return errors.Join(c.validate(nil)...)
}

// validate attributes each problem to where its key was last set.
func (c Config) validate(origins map[string]origin) []error {
	rs := rules()
	var errs []error
	for _, key := range Keys() {
		r := rs[key]
		if r.check == nil {
			continue
		}
		problem := r.check(&c)
		if problem == "" {
			continue
		}
		at, o := key, origins[key]
		for _, other := range r.compares {
			if o == (origin{}) && origins[other] != (origin{}) {
				at, o = other, origins[other]
				problem = fmt.Sprintf("makes the default %s invalid: %s", key, problem)
			}
		}
		errs = append(errs, &FieldError{
			Key: at, Problem: problem, Allowed: r.allowed,
			File: o.file, Line: o.line, Column: o.column, EnvVar: o.envVar,
		})
	}
	return errs
}

// problem says what is wrong with one notify entry, "" when nothing is.
func (n Notify) problem() string {
	var bad []string
	switch n.Kind {
	case NotifyWebhook, NotifyNtfy, NotifySlack:
		u, err := url.Parse(n.URL)
		switch {
		case n.URL == "":
			bad = append(bad, fmt.Sprintf("kind %s needs a url", n.Kind))
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			bad = append(bad, fmt.Sprintf("url %q is not an http(s) URL", secrets.Redact(n.URL)))
		}
		if len(n.Command) > 0 {
			bad = append(bad, fmt.Sprintf("kind %s takes no command", n.Kind))
		}
	case NotifyCommand:
		if len(n.Command) == 0 || n.Command[0] == "" {
			bad = append(bad, "kind command needs command: [program, args…]")
		}
		if n.URL != "" {
			bad = append(bad, "kind command takes no url")
		}
	case "":
		bad = append(bad, "no kind")
	default:
		bad = append(bad, fmt.Sprintf("kind %q is not webhook, ntfy, slack or command", n.Kind))
	}
	for _, e := range n.Events {
		if !slices.Contains(NotifyEvents(), e) {
			bad = append(bad, fmt.Sprintf("event %q is not one of %s", e, strings.Join(NotifyEvents(), ", ")))
		}
	}
	if n.Timeout < 0 || time.Duration(n.Timeout) > 10*time.Second {
		bad = append(bad, fmt.Sprintf("timeout %s is not between 0 and 10s", n.Timeout))
	}
	return strings.Join(bad, ", ")
}
