// Package tune replays recorded sessions under candidate settings —
// context_threshold, context_max_tokens, max_restarts — through the policy
// a run decides with (replay.go), and reports for each candidate the
// sessions, restarts, long-context turns and modelled cost, beside the
// quality signals of the history, with a recommendation under an explicit
// objective. It first replays every recorded run at the settings it ran
// with: the self-check, which must reproduce the restarts the run made,
// where it made them. It reads no file: history in, a Report out.
package tune

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/history"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/spend"
)

// Objectives: what a recommendation optimizes (see ObjectiveHelp).
const (
	ObjectiveCost     = "cost"
	ObjectiveContext  = "context"
	ObjectiveBalanced = "balanced"
)

// Objectives are the objectives, in the order help lists them.
var Objectives = []string{ObjectiveCost, ObjectiveContext, ObjectiveBalanced}

// balancedSlack is how much dearer than the cheapest a balanced choice may
// be for less context.
const balancedSlack = 0.05

// ObjectiveHelp says what each objective means.
var ObjectiveHelp = map[string]string{
	ObjectiveCost: "the lowest modelled cost (cache writes, cache reads, input and output at the model's prices); " +
		"ties go to fewer restarts",
	ObjectiveContext: "the least long context: fewest turns above 400K, then above 200K, then the lowest peak, " +
		"then the lowest cost — for those who trust a short context more than a cheap one",
	ObjectiveBalanced: fmt.Sprintf("the least long context among the candidates that cost at most %d %% more than the cheapest "+
		"(turns above 400K, then 200K, then peak, then cost)", int(balancedSlack*100)),
}

// Options are a tuning's inputs.
type Options struct {
	// Config is the current configuration: candidates are it with their
	// three settings changed, the self-check fills what a run did not
	// record from it.
	Config config.Config
	// Thresholds, Caps (tokens; 0 no cap) and MaxRestarts are the grid;
	// empty ones take their defaults (DefaultThresholds, the current cap
	// and, with 1M windows, DefaultCaps; the current max_restarts).
	Thresholds, Caps, MaxRestarts []int
	Objective                     string
	Prices                        budget.Prices // nil: budget.DefaultPrices with the config's
}

// DefaultThresholds and DefaultCaps are the grid without --threshold and --cap.
var (
	DefaultThresholds = []int{50, 60, 70, 80, 90}
	DefaultCaps       = []int{200_000, 400_000, 600_000}
)

// Report is a tuning's result.
type Report struct {
	Objective   string          `json:"objective"`
	Streams     []StreamInfo    `json:"streams"`
	SelfCheck   SelfCheck       `json:"self_check"`
	Candidates  []Candidate     `json:"candidates"`
	Recommended *Recommendation `json:"recommended"`
	Model       model           `json:"assumptions"`
	Prices      []PriceUsed     `json:"prices"`
	Quality     Quality         `json:"quality"`
	Skipped     []string        `json:"skipped"`
	Notes       []string        `json:"notes"`
}

// StreamInfo names one stream of work, in restarts_by_session's order.
type StreamInfo struct {
	Source   history.Source `json:"source"`
	Run      string         `json:"run,omitempty"`
	Phase    string         `json:"phase,omitempty"`
	Path     string         `json:"path,omitempty"`
	Model    string         `json:"model"`
	Window   int64          `json:"window"`
	Sessions int            `json:"sessions"`
	Turns    int            `json:"turns"`
	// Compactions are the CLI's own, before a turn; SideTokens what
	// subagents processed (cost, not context).
	Compactions int   `json:"compactions"`
	SideTokens  int64 `json:"side_tokens"`
}

// SelfCheck is every recorded run replayed at the settings it ran with.
type SelfCheck struct {
	Exact    bool          `json:"exact"`
	Sessions []CheckStream `json:"sessions"`
	// CostUSD is the replay's modelled cost against RecordedCostUSD, what
	// the runs recorded they cost.
	CostUSD         float64 `json:"cost_usd"`
	RecordedCostUSD float64 `json:"recorded_cost_usd"`
}

// CheckStream is one recorded phase: its restarts as recorded and as
// replayed, each the turn of the phase's work at which the next session
// began (counting from 0 over its sessions' working turns).
type CheckStream struct {
	Run              string `json:"run"`
	Phase            string `json:"phase"`
	RecordedRestarts int    `json:"recorded_restarts"`
	ReplayedRestarts int    `json:"replayed_restarts"`
	RecordedAt       []int  `json:"recorded_at"`
	ReplayedAt       []int  `json:"replayed_at"`
	Exact            bool   `json:"exact"`
	// SettingsRecorded is false for a run recorded before its settings
	// were kept: the current configuration's stand in.
	SettingsRecorded bool `json:"settings_recorded"`
}

// Candidate is one setting of the three, and what the history would have
// done under it.
type Candidate struct {
	Current          bool `json:"current"`
	ContextThreshold int  `json:"context_threshold"`
	ContextMaxTokens int  `json:"context_max_tokens"`
	MaxRestarts      int  `json:"max_restarts"`
	// Adaptive says whether an adaptive budget's restarts are replayed
	// (where they happened); set only when the history has any.
	Adaptive *bool `json:"adaptive,omitempty"`
	Sessions int   `json:"sessions"`
	Restarts int   `json:"restarts"`
	// RestartsBySession is one entry per stream (Report.Streams' order).
	RestartsBySession []int `json:"restarts_by_session"`
	// OutOfRestarts are the streams whose phase would have failed for
	// max_restarts; their work past that point is not in the figures.
	OutOfRestarts int           `json:"out_of_restarts"`
	PeakTokens    int64         `json:"peak_tokens"`
	Turns         int           `json:"turns"`
	TurnsOver200K int           `json:"turns_over_200k"`
	TurnsOver400K int           `json:"turns_over_400k"`
	CostUSD       float64       `json:"cost_usd"`
	CostByKind    CostByKind    `json:"cost_by_kind"`
	Tokens        budget.Tokens `json:"tokens"`
}

// CostByKind splits a modelled cost by token kind, USD.
type CostByKind struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheWrite float64 `json:"cache_write"`
	CacheRead  float64 `json:"cache_read"`
}

func (c *CostByKind) add(p budget.Price, t budget.Tokens) {
	c.Input += float64(t.Input) * p.Input / 1e6
	c.Output += float64(t.Output) * p.Output / 1e6
	c.CacheWrite += float64(t.CacheWrite) * p.CacheWrite / 1e6
	c.CacheRead += float64(t.CacheRead) * p.CacheRead / 1e6
}

// Recommendation is the candidate an objective picks.
type Recommendation struct {
	Candidate
	Objective string `json:"objective"`
	Why       string `json:"why"`
}

// PriceUsed is a model's price the cost was modelled at.
type PriceUsed struct {
	Model string       `json:"model"`
	Price budget.Price `json:"price_per_mtok"`
	Known bool         `json:"known"`
}

// Tune replays the streams under the grid and the recorded settings.
func Tune(streams []history.Stream, opts Options) (*Report, error) {
	if opts.Objective == "" {
		opts.Objective = ObjectiveCost
	}
	if !slices.Contains(Objectives, opts.Objective) {
		return nil, fmt.Errorf("objective %q: want one of %v", opts.Objective, Objectives)
	}
	if opts.Prices == nil {
		opts.Prices = spend.Prices(opts.Config.Budget)
	}
	rep := &Report{Objective: opts.Objective, Skipped: []string{}, Notes: []string{}}
	works := make([]*work, len(streams))
	for i := range streams {
		works[i] = layout(&streams[i])
		st := &streams[i]
		info := StreamInfo{Source: st.Source, Run: st.Run, Phase: st.Phase, Path: st.Path,
			Model: st.Model, Window: st.Window, Sessions: len(st.Sessions), Turns: len(works[i].pos), SideTokens: works[i].side.Processed()}
		for _, p := range works[i].pos {
			if p.turn.Compacted {
				info.Compactions++
			}
		}
		rep.Streams = append(rep.Streams, info)
	}
	m := measure(works)
	rep.Model = m
	rep.Prices = pricesUsed(streams, opts.Prices)
	rep.SelfCheck = selfCheck(works, opts, &m)
	rep.Candidates = grid(works, opts, &m)
	rep.Recommended = recommend(rep.Candidates, opts.Objective)
	rep.Quality = quality(streams)
	return rep, nil
}

// settings is the current configuration with a candidate's three settings.
func (c Candidate) settings(base config.Config) config.Config {
	base.ContextThreshold, base.ContextMaxTokens, base.MaxRestarts = c.ContextThreshold, c.ContextMaxTokens, c.MaxRestarts
	return base
}

// windowOf is the window a replay of w judges against: the config's
// context_window when set, else the one the stream ran with.
func windowOf(w *work, cfg config.Config) int64 {
	if cfg.ContextWindow > 0 {
		return int64(cfg.ContextWindow)
	}
	return cmp.Or(w.stream.Window, estimator.DefaultWindow)
}

// evaluate replays every stream under cfg.
func evaluate(works []*work, cfg config.Config, m *model, prices budget.Prices) Candidate {
	c := Candidate{ContextThreshold: cfg.ContextThreshold, ContextMaxTokens: cfg.ContextMaxTokens, MaxRestarts: cfg.MaxRestarts,
		RestartsBySession: []int{}}
	for _, w := range works {
		out := replay(w, cfg, windowOf(w, cfg), m)
		c.Sessions += out.sessions
		c.Restarts += len(out.restarts)
		c.RestartsBySession = append(c.RestartsBySession, len(out.restarts))
		if out.outOfRestarts {
			c.OutOfRestarts++
		}
		price, _ := prices.Lookup(w.stream.Model)
		for _, t := range out.turns {
			c.Turns++
			c.PeakTokens = max(c.PeakTokens, t.ctx)
			if t.ctx > 200_000 {
				c.TurnsOver200K++
			}
			if t.ctx > 400_000 {
				c.TurnsOver400K++
			}
			c.Tokens = c.Tokens.Add(t.usage)
			c.CostUSD += price.Cost(t.usage)
			c.CostByKind.add(price, t.usage)
		}
		c.Tokens = c.Tokens.Add(w.side)
		c.CostUSD += price.Cost(w.side)
		c.CostByKind.add(price, w.side)
	}
	return c
}

// selfCheck replays each recorded run at its own settings.
func selfCheck(works []*work, opts Options, m *model) SelfCheck {
	sc := SelfCheck{Exact: true, Sessions: []CheckStream{}}
	for _, w := range works {
		st := w.stream
		if st.Source != history.SourceRun {
			continue
		}
		window := 0
		if st.WindowFrom == "config" {
			window = int(st.Window)
		}
		cfg := policy.WithRecorded(opts.Config, st.Threshold, window, st.MaxTokens, st.Settings)
		out := replay(w, cfg, windowOf(w, cfg), m)
		cs := CheckStream{Run: st.Run, Phase: st.Phase, RecordedRestarts: len(w.restarts), ReplayedRestarts: len(out.restarts),
			RecordedAt: append([]int{}, w.restarts...), ReplayedAt: append([]int{}, out.restarts...), SettingsRecorded: st.Settings != nil}
		cs.Exact = slices.Equal(cs.RecordedAt, cs.ReplayedAt)
		sc.Exact = sc.Exact && cs.Exact
		sc.Sessions = append(sc.Sessions, cs)
		price, _ := opts.Prices.Lookup(st.Model)
		for _, t := range out.turns {
			sc.CostUSD += price.Cost(t.usage)
		}
		sc.CostUSD += price.Cost(w.side)
		sc.RecordedCostUSD += w.recorded
	}
	return sc
}

// grid evaluates the current settings, then each candidate of the grid.
func grid(works []*work, opts Options, m *model) []Candidate {
	cur := opts.Config
	current := evaluate(works, cur, m, opts.Prices)
	current.Current = true
	out := []Candidate{current}
	thresholds := opts.Thresholds
	if len(thresholds) == 0 {
		thresholds = DefaultThresholds
	}
	caps := opts.Caps
	if len(caps) == 0 {
		caps = []int{cur.ContextMaxTokens}
		if long(works, cur) {
			caps = append(caps, DefaultCaps...)
		}
	}
	restarts := opts.MaxRestarts
	if len(restarts) == 0 {
		restarts = []int{cur.MaxRestarts}
	}
	seen := map[[3]int]bool{{cur.ContextThreshold, cur.ContextMaxTokens, cur.MaxRestarts}: true}
	add := func(thr, cp, mr int) *Candidate {
		key := [3]int{thr, cp, mr}
		if seen[key] {
			return nil
		}
		seen[key] = true
		c := evaluate(works, Candidate{ContextThreshold: thr, ContextMaxTokens: cp, MaxRestarts: mr}.settings(cur), m, opts.Prices)
		out = append(out, c)
		return &out[len(out)-1]
	}
	if adaptiveRestarts(works) {
		on := cur.Budget.Enforcement == config.EnforceAdaptive
		out[0].Adaptive = &on
		if on {
			// The same settings without the adaptive budget's restarts.
			off := cur
			off.Budget.Enforcement = config.EnforceSoft
			c := evaluate(works, off, m, opts.Prices)
			c.Adaptive = new(bool)
			out = append(out, c)
		}
	}
	for _, thr := range thresholds {
		for _, cp := range uniq(caps) {
			for _, mr := range restarts {
				c := add(thr, cp, mr)
				if c == nil || c.OutOfRestarts == 0 || len(opts.MaxRestarts) > 0 {
					continue
				}
				// Out of restarts at the current max: also the max the
				// work needed, so a recommendation never fails a phase.
				need := evaluate(works, Candidate{ContextThreshold: thr, ContextMaxTokens: cp, MaxRestarts: 1000}.settings(cur), m, opts.Prices)
				add(thr, cp, slices.Max(need.RestartsBySession))
			}
		}
	}
	return out
}

// adaptiveRestarts reports whether an adaptive budget restarted any
// recorded session.
func adaptiveRestarts(works []*work) bool {
	for _, w := range works {
		for _, p := range w.pos {
			if p.turn.Adaptive {
				return true
			}
		}
	}
	return false
}

// long reports whether any stream runs with a window above 200K.
func long(works []*work, cfg config.Config) bool {
	return slices.ContainsFunc(works, func(w *work) bool { return windowOf(w, cfg) > estimator.DefaultWindow })
}

func uniq(vs []int) []int {
	var out []int
	for _, v := range vs {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func pricesUsed(streams []history.Stream, prices budget.Prices) []PriceUsed {
	out := []PriceUsed{}
	for _, st := range streams {
		if slices.ContainsFunc(out, func(p PriceUsed) bool { return p.Model == st.Model }) {
			continue
		}
		p, known := prices.Lookup(st.Model)
		out = append(out, PriceUsed{Model: st.Model, Price: p, Known: known})
	}
	return out
}
