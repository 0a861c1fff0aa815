// Package config resolves debussy's settings: defaults < .debussy.yaml <
// DEBUSSY_* environment < flags the user set (applied by the caller, who then
// calls Validate).
package config

import (
	"errors"
	"reflect"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// ErrInvalid is wrapped by every error Load and Validate return, so callers
// can map any configuration problem to the usage exit code.
var ErrInvalid = errors.New("invalid config")

// Config is the resolved configuration. Field order is the order of Keys(),
// of YAML() and of .debussy.example.yaml. Every field carries a yaml tag:
// goccy/go-yaml would otherwise match lower-cased field names, not snake_case.
type Config struct {
	ClaudeBin             string            `yaml:"claude_bin" json:"claude_bin"`
	Model                 string            `yaml:"model" json:"model"`
	FallbackModel         string            `yaml:"fallback_model" json:"fallback_model"`
	PermissionMode        string            `yaml:"permission_mode" json:"permission_mode"`
	AllowedTools          []string          `yaml:"allowed_tools" json:"allowed_tools"`
	Sandbox               string            `yaml:"sandbox" json:"sandbox"`
	SandboxWrite          []string          `yaml:"sandbox_write" json:"sandbox_write"`
	SandboxAllowDomains   []string          `yaml:"sandbox_allow_domains" json:"sandbox_allow_domains"`
	SandboxDenyRead       []string          `yaml:"sandbox_deny_read" json:"sandbox_deny_read"`
	ContextThreshold      int               `yaml:"context_threshold" json:"context_threshold"`
	ToolCallThreshold     int               `yaml:"tool_call_threshold" json:"tool_call_threshold"`
	MaxRestarts           int               `yaml:"max_restarts" json:"max_restarts"`
	ContextWindow         int               `yaml:"context_window" json:"context_window"`
	ContextMaxTokens      int               `yaml:"context_max_tokens" json:"context_max_tokens"`
	MaxRetries            int               `yaml:"max_retries" json:"max_retries"`
	RetryBackoff          Duration          `yaml:"retry_backoff" json:"retry_backoff"`
	UsageLimitWait        Duration          `yaml:"usage_limit_wait" json:"usage_limit_wait"`
	RequireDoneSignal     bool              `yaml:"require_done_signal" json:"require_done_signal"`
	SessionTimeout        Duration          `yaml:"session_timeout" json:"session_timeout"`
	IdleTimeout           Duration          `yaml:"idle_timeout" json:"idle_timeout"`
	GateTimeout           Duration          `yaml:"gate_timeout" json:"gate_timeout"`
	StopGrace             Duration          `yaml:"stop_grace" json:"stop_grace"`
	Handoff               bool              `yaml:"handoff" json:"handoff"`
	HandoffGraceCalls     int               `yaml:"handoff_grace_calls" json:"handoff_grace_calls"`
	HandoffGraceTime      Duration          `yaml:"handoff_grace_time" json:"handoff_grace_time"`
	AllowCompaction       bool              `yaml:"allow_compaction" json:"allow_compaction"`
	ZoneToolCallsYellow   int               `yaml:"zone_tool_calls_yellow" json:"zone_tool_calls_yellow"`
	ZoneToolCallsRed      int               `yaml:"zone_tool_calls_red" json:"zone_tool_calls_red"`
	ZoneLargeReadsYellow  int               `yaml:"zone_large_reads_yellow" json:"zone_large_reads_yellow"`
	ZoneLargeReadsRed     int               `yaml:"zone_large_reads_red" json:"zone_large_reads_red"`
	ZoneDelegationsYellow int               `yaml:"zone_delegations_yellow" json:"zone_delegations_yellow"`
	ZoneDelegationsRed    int               `yaml:"zone_delegations_red" json:"zone_delegations_red"`
	ZoneAction            string            `yaml:"zone_action" json:"zone_action"`
	NudgeRepeat           int               `yaml:"nudge_repeat" json:"nudge_repeat"`
	NudgeRepeatWindow     int               `yaml:"nudge_repeat_window" json:"nudge_repeat_window"`
	NudgeRepeatRestart    int               `yaml:"nudge_repeat_restart" json:"nudge_repeat_restart"`
	NudgeExploreReads     int               `yaml:"nudge_explore_reads" json:"nudge_explore_reads"`
	NudgeCooldown         int               `yaml:"nudge_cooldown" json:"nudge_cooldown"`
	Budget                Budget            `yaml:"budget" json:"budget"`
	AutoCommit            bool              `yaml:"auto_commit" json:"auto_commit"`
	AllowDirty            bool              `yaml:"allow_dirty" json:"allow_dirty"`
	StrictGit             bool              `yaml:"strict_git" json:"strict_git"`
	Parallel              int               `yaml:"parallel" json:"parallel"`
	WorktreeSetup         string            `yaml:"worktree_setup" json:"worktree_setup"`
	WorktreeSetupTimeout  Duration          `yaml:"worktree_setup_timeout" json:"worktree_setup_timeout"`
	GateCommands          map[string]string `yaml:"gate_commands" json:"gate_commands"`
	StrictGates           bool              `yaml:"strict_gates" json:"strict_gates"`
	ExtraArgs             []string          `yaml:"extra_args" json:"extra_args"`
	RedactAllow           []string          `yaml:"redact_allow" json:"redact_allow"`
	Notify                []Notify          `yaml:"notify" json:"notify"`
	RedactDeny            []string          `yaml:"redact_deny" json:"redact_deny"`
	LogFormat             string            `yaml:"log_format" json:"log_format"`
	LogLevel              string            `yaml:"log_level" json:"log_level"`
	LogText               bool              `yaml:"log_text" json:"log_text"`
}

// Budget is the `budget:` block. Its keys are dotted in Keys(), rules and
// errors ("budget.phase.tokens") and underscored in the environment
// (DEBUSSY_BUDGET_PHASE_TOKENS).
type Budget struct {
	Phase                    Limits                `yaml:"phase" json:"phase"`
	Plan                     Limits                `yaml:"plan" json:"plan"`
	Enforcement              string                `yaml:"enforcement" json:"enforcement"`
	RestartThreshold         float64               `yaml:"restart_threshold" json:"restart_threshold"`
	MinCompletionProbability float64               `yaml:"min_completion_probability" json:"min_completion_probability"`
	MaxExtensions            int                   `yaml:"max_extensions" json:"max_extensions"`
	Prices                   map[string]ModelPrice `yaml:"prices" json:"prices"`
}

// Notify is one receiver of the run's notifications (package notify): a
// list entry of `notify:`.
type Notify struct {
	Kind    string   `yaml:"kind" json:"kind"`       // webhook, ntfy, slack or command
	URL     string   `yaml:"url" json:"url"`         // webhook, ntfy (the topic's URL), slack (the incoming webhook)
	Command []string `yaml:"command" json:"command"` // command: the program and its arguments
	// Events limits the entry to these events; empty is every event.
	Events []string `yaml:"events" json:"events"`
	// Timeout bounds one event's delivery, retries included; 0 is 5 s.
	Timeout Duration `yaml:"timeout" json:"timeout"`
}

// Notification kinds (notify.kind).
const (
	NotifyWebhook = "webhook"
	NotifyNtfy    = "ntfy"
	NotifySlack   = "slack"
	NotifyCommand = "command"
)

// NotifyEvents are the events a notify entry may list.
func NotifyEvents() []string {
	return []string{"completed", "failed", "blocked", "usage_limit", "budget_exhausted", "interrupted"}
}

// Limits is one budget; 0 is no limit.
type Limits struct {
	Tokens   int64    `yaml:"tokens" json:"tokens"`
	CostUSD  float64  `yaml:"cost_usd" json:"cost_usd"`
	Duration Duration `yaml:"duration" json:"duration"`
}

// ModelPrice overrides the price of the models whose id starts with its
// key, in USD per million tokens.
type ModelPrice struct {
	Input      float64 `yaml:"input" json:"input"`
	Output     float64 `yaml:"output" json:"output"`
	CacheWrite float64 `yaml:"cache_write" json:"cache_write"`
	CacheRead  float64 `yaml:"cache_read" json:"cache_read"`
}

// Budget enforcement modes.
const (
	EnforceStrict   = "strict"
	EnforceAdvisory = "advisory"
	EnforceSoft     = "soft"
	EnforceAdaptive = "adaptive"
)

// Permission modes the claude CLI accepts for --permission-mode.
const (
	PermissionBypass      = "bypassPermissions"
	PermissionAcceptEdits = "acceptEdits"
	PermissionDefault     = "default"
	PermissionPlan        = "plan"
)

// Zone actions: what a red zone does (zone_action).
const (
	ZoneActionNote    = "note"
	ZoneActionHandoff = "handoff"
)

// Log formats.
const (
	LogText = "text"
	LogJSON = "json"
)

// Log levels: debug adds the stop timeline and commit details (--verbose),
// warn keeps only warnings and errors (--quiet).
const (
	LevelDebug = "debug"
	LevelInfo  = "info"
	LevelWarn  = "warn"
	LevelError = "error"
)

// Defaults returns the built-in configuration. Empty collections are
// non-nil so a file saying `gate_commands: {}` resolves to an equal value.
func Defaults() Config {
	return Config{
		ClaudeBin:             "claude",
		Model:                 "",
		PermissionMode:        PermissionBypass,
		ContextThreshold:      80,
		ToolCallThreshold:     0,
		MaxRestarts:           3,
		ContextWindow:         0,
		ContextMaxTokens:      400_000,
		MaxRetries:            2,
		RetryBackoff:          Duration(5 * time.Second),
		UsageLimitWait:        Duration(6 * time.Hour),
		RequireDoneSignal:     true,
		SessionTimeout:        Duration(2 * time.Hour),
		IdleTimeout:           Duration(10 * time.Minute),
		GateTimeout:           Duration(10 * time.Minute),
		StopGrace:             Duration(60 * time.Second),
		Handoff:               true,
		HandoffGraceCalls:     5,
		HandoffGraceTime:      Duration(2 * time.Minute),
		AllowCompaction:       false,
		ZoneToolCallsYellow:   150,
		ZoneToolCallsRed:      250,
		ZoneLargeReadsYellow:  8,
		ZoneLargeReadsRed:     16,
		ZoneDelegationsYellow: 8,
		ZoneDelegationsRed:    16,
		ZoneAction:            ZoneActionNote,
		NudgeRepeat:           3,
		NudgeRepeatWindow:     20,
		NudgeRepeatRestart:    5,
		NudgeExploreReads:     10,
		NudgeCooldown:         5,
		Budget: Budget{
			Enforcement:              EnforceStrict,
			RestartThreshold:         0.9,
			MinCompletionProbability: 0.5,
			MaxExtensions:            1,
			Prices:                   map[string]ModelPrice{},
		},
		AutoCommit:           true,
		AllowDirty:           false,
		Parallel:             1,
		WorktreeSetupTimeout: Duration(10 * time.Minute),
		GateCommands:         map[string]string{},
		ExtraArgs:            []string{},
		AllowedTools:         []string{},
		Sandbox:              SandboxAuto,
		// Go writes its build cache even offline: its gates and the
		// agent's `go test` would fail without it.
		SandboxWrite:        []string{"~/.cache/go-build"},
		SandboxAllowDomains: []string{},
		SandboxDenyRead:     []string{},
		RedactAllow:         []string{},
		Notify:              []Notify{},
		RedactDeny:          []string{},
		LogFormat:           LogText,
		LogLevel:            LevelInfo,
	}
}

// Keys returns every configuration key in documentation order. A block
// such as budget gives its leaves, dotted: "budget.phase.tokens".
func Keys() []string {
	var keys []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			if isBlock(f.Type) {
				walk(f.Type, prefix+yamlKey(f)+".")
				continue
			}
			keys = append(keys, prefix+yamlKey(f))
		}
	}
	walk(reflect.TypeFor[Config](), "")
	return keys
}

// isBlock says a field is a nested block of keys rather than one value.
func isBlock(t reflect.Type) bool { return t.Kind() == reflect.Struct }

func yamlKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// field returns the addressable field of c named by key, dotted for the
// keys of a block; a block itself is found too (isBlock says which).
func field(c *Config, key string) (reflect.Value, bool) {
	v := reflect.ValueOf(c).Elem()
	for name := range strings.SplitSeq(key, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		t, found := v.Type(), false
		for i := range t.NumField() {
			if yamlKey(t.Field(i)) == name {
				v, found = v.Field(i), true
				break
			}
		}
		if !found {
			return reflect.Value{}, false
		}
	}
	return v, true
}

// YAML renders the resolved configuration, keys in Keys() order, in a form
// Load reads back to an equal Config.
func (c Config) YAML() string {
	out := c
	// Render nil collections as {} and [] rather than null.
	if out.GateCommands == nil {
		out.GateCommands = map[string]string{}
	}
	if out.ExtraArgs == nil {
		out.ExtraArgs = []string{}
	}
	if out.RedactAllow == nil {
		out.RedactAllow = []string{}
	}
	if out.Notify == nil {
		out.Notify = []Notify{}
	}
	if out.RedactDeny == nil {
		out.RedactDeny = []string{}
	}
	if out.SandboxWrite == nil {
		out.SandboxWrite = []string{}
	}
	if out.SandboxAllowDomains == nil {
		out.SandboxAllowDomains = []string{}
	}
	if out.SandboxDenyRead == nil {
		out.SandboxDenyRead = []string{}
	}
	if out.Budget.Prices == nil {
		out.Budget.Prices = map[string]ModelPrice{}
	}
	b, err := yaml.MarshalWithOptions(out, yaml.Indent(2))
	if err != nil {
		// Every field type marshals; keep the signature simple for callers.
		return "# render config: " + err.Error() + "\n"
	}
	return string(b)
}

// IntFlags are the integer settings `debussy run` takes as flags, by the
// flag's name: a flag the user set replaces the file's value.
func (c *Config) IntFlags() map[string]*int {
	return map[string]*int{
		"context-threshold":   &c.ContextThreshold,
		"context-max-tokens":  &c.ContextMaxTokens,
		"tool-call-threshold": &c.ToolCallThreshold,
		"max-restarts":        &c.MaxRestarts,
		"max-retries":         &c.MaxRetries,
		"parallel":            &c.Parallel,
	}
}
