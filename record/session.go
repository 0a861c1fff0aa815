package record

// The events a session records (package session), each stamped with its
// phase and session.

// Policy is what the policy decided and records (a warning, a refusal, a
// handoff, a nudge...): its name is the effect's, its keys Fields'.
type Policy struct {
	Name PolicyEvent `json:"-"`
	Session
	Fields
}

// BudgetLevel is a budget's level changing.
type BudgetLevel struct {
	Session
	Scope       string  `json:"scope"`
	Level       string  `json:"level"`
	UsedPct     float64 `json:"used_pct"`
	Dimension   string  `json:"dimension"`
	Enforcement string  `json:"enforcement"`
	Left        string  `json:"left"`
}

// BudgetQuarter is one adaptive evaluation.
type BudgetQuarter struct {
	Session
	UsedPct     float64 `json:"used_pct"`
	TasksDone   int     `json:"tasks_done"`
	TasksTotal  int     `json:"tasks_total"`
	Probability float64 `json:"probability"`
	Decision    string  `json:"decision"`
}

// CostUnpriced is a model a cost budget cannot price yet.
type CostUnpriced struct {
	Session
	Model string `json:"model"`
}

// CompactionAttempt is the CLI starting to compact its context.
type CompactionAttempt struct {
	Session
	Allowed bool `json:"allowed"`
}

// Compaction is the CLI having compacted its context.
type Compaction struct {
	Session
	PreTokens int64 `json:"pre_tokens"`
	Allowed   bool  `json:"allowed"`
}

// ContextCategory is one line of the CLI's context breakdown, its fields
// in key order.
type ContextCategory struct {
	ID     string `json:"id,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Name   string `json:"name"`
	Tokens int64  `json:"tokens"`
}

// ContextUsage is the CLI's answer to get_context_usage.
type ContextUsage struct {
	Model             string            `json:"model"`
	Window            int64             `json:"window"`
	TotalTokens       int64             `json:"total_tokens"`
	CompactAt         int64             `json:"compact_at"`
	AutocompactSource string            `json:"autocompact_source"`
	Categories        []ContextCategory `json:"categories"`
}

// ContextBreakdown is the CLI's first answer in a session; Reused when
// it is the run's answer for the same CLI and model, not asked again.
type ContextBreakdown struct {
	Session
	ContextUsage
	Reused bool `json:"reused,omitempty"`
}

// ContextWindow is a later answer (the model changed).
type ContextWindow struct {
	Session
	ContextUsage
}

// Interrupt is Ctrl-C (or --fail-fast) stopping the session.
type Interrupt struct {
	Session
	FailFast bool `json:"fail_fast,omitempty"`
}

// Mark is one step of the runner's stop timeline (runner.Mark).
type Mark struct {
	Name string `json:"-"`
	Session
	MarkFields
}

func (p Policy) EventName() string          { return string(p.Name) }
func (m Mark) EventName() string            { return m.Name }
func (BudgetLevel) EventName() string       { return "budget_level" }
func (BudgetQuarter) EventName() string     { return "budget_quarter" }
func (CostUnpriced) EventName() string      { return "cost_unpriced" }
func (CompactionAttempt) EventName() string { return "compaction_attempt" }
func (Compaction) EventName() string        { return "compaction" }
func (ContextBreakdown) EventName() string  { return "context_breakdown" }
func (ContextWindow) EventName() string     { return "context_window" }
func (Interrupt) EventName() string         { return "interrupt" }
