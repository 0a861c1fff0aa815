package report

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/secrets"
	"github.com/debussy-dev/debussy/state"
)

// Report is a run, laid out for drawing.
type Report struct {
	RunID, Plan, Status string
	Started, Ended      time.Time
	Threshold           int   // context_threshold, percent
	MaxTokens           int64 // context_max_tokens; 0 is off
	Phases              []*Phase
	// NotRun are the plan's phases this run did not start: skipped as
	// completed already, or left pending (--only, a stop before them).
	NotRun []NotRunPhase
	// Spend is the sessions' spend by kind, for the charts; Totals the
	// ledger's figures the header says, as the summary and status do.
	Spend  Spend
	Totals Totals
	Budget Limits // the plan's
	Tuning *Tuning
}

// NotRunPhase is a phase of the plan the run did not start, with its state.
type NotRunPhase struct{ ID, Title, Status string }

// Phase is one phase of the run.
type Phase struct {
	ID, Title, Status string
	Started, Ended    time.Time
	Restarts          int
	Error             string
	Sessions          []*Session
	Gates             []Gate
	Done              *state.Signal
	Spend             Spend
	// Spent is the phase's spend as the ledger records it, the figure
	// the summary and status show: this run's, and across its runs.
	Spent  PhaseSpend
	Budget Limits
	Notes  []string // remediation, retries, merges: what happened between sessions
}

// UncheckedGates are the names of the phase's gates that had no command
// and did not run: never a pass, whatever the phase's status.
func (p *Phase) UncheckedGates() []string {
	var out []string
	for _, g := range p.Gates {
		if g.Unchecked && !slices.Contains(out, g.Name) {
			out = append(out, g.Name)
		}
	}
	return out
}

// Session is one claude process of a phase.
type Session struct {
	N             int
	Start, End    time.Time
	Outcome       string // how the session ended: its reason when debussy stopped it
	Model         string
	Window        int64
	Points        []Point
	Marks         []Mark
	Spend         Spend
	Tools         []Count
	SubagentTools int
	Commits       []Commit
	Refusals      []string
	Nudges        []string
	started       bool
	endCost       float64 // what its session_ended says it cost (no stream to read)
}

// Mark is something that happened in a session, placed on its turn.
type Mark struct {
	Kind Kind
	Turn int
	At   time.Time // zero when only the stream knows it (the done call)
	Text string
}

// Count is one tool's calls.
type Count struct {
	Name  string
	Calls int
}

// Commit is one commit of the run with the paths it changed.
type Commit struct {
	Hash, Subject, Event string
	Changes              []gitcommit.Change
}

// Gate is one gate run after a session.
type Gate struct {
	Name, Command string
	Passed        bool
	Unchecked     bool
	ExitCode      int
	End           time.Time
	Duration      time.Duration
	AfterSession  int
}

// Spend is tokens by kind and their cost.
type Spend struct {
	Tokens budget.Tokens
	Cost   float64
	// CostByKind splits Cost in the order of Kinds (input, cache read,
	// cache write, output), priced at the session's main model and scaled
	// to Cost.
	CostByKind [4]float64
}

// Kinds are the token kinds in the order the charts stack them.
var Kinds = [4]string{"input", "cache read", "cache write", "output"}

func (s Spend) byKind() [4]float64 {
	t := s.Tokens
	return [4]float64{float64(t.Input), float64(t.CacheRead), float64(t.CacheWrite), float64(t.Output)}
}

func (s Spend) add(o Spend) Spend {
	r := Spend{Tokens: s.Tokens.Add(o.Tokens), Cost: s.Cost + o.Cost}
	for i := range r.CostByKind {
		r.CostByKind[i] = s.CostByKind[i] + o.CostByKind[i]
	}
	return r
}

// Limits is a budget: 0 is no limit.
type Limits struct {
	Tokens int64
	Cost   float64
}

// Kind is what a mark says.
type Kind string

const (
	KindWarning     Kind = "warning"
	KindThreshold   Kind = "threshold"
	KindHandoff     Kind = "handoff_requested"
	KindHandoffDone Kind = "handoff_written"
	KindRefusal     Kind = "refusal"
	KindNudge       Kind = "nudge"
	KindStop        Kind = "stop"
	KindEmergency   Kind = "emergency"
	KindStopBlocked Kind = "stop_blocked"
	KindCompaction  Kind = "compaction"
	KindZone        Kind = "zone"
	KindBudget      Kind = "budget"
	KindInterrupt   Kind = "interrupt"
	KindDone        Kind = "done"
)

// Build lays out the run, its texts redacted. It never fails: what is
// missing is left out.
func Build(in Input) *Report {
	run := in.Run
	r := &Report{RunID: run.ID, Plan: in.PlanName, Status: string(run.Status), Started: run.StartedAt, Ended: run.EndedAt,
		Threshold: in.Threshold, MaxTokens: in.MaxTokens, Totals: TotalsOf(run), Tuning: in.Tuning}
	if r.Plan == "" {
		r.Plan = filepath.Base(run.Plan)
	}
	if e := run.Economics; e != nil {
		r.Budget = Limits{Tokens: e.Limits.Tokens, Cost: e.Limits.CostUSD}
	}
	byID := map[string]*Phase{}
	for _, pr := range run.Phases {
		// A phase this run never started (skipped as done, or left
		// pending by --only) has nothing to draw; one that ended before
		// its first session (a spent budget) keeps its error.
		if pr.Sessions == 0 && pr.LastError == "" {
			r.NotRun = append(r.NotRun, NotRunPhase{ID: pr.ID, Title: pr.Title, Status: string(pr.Status)})
			continue
		}
		p := &Phase{ID: pr.ID, Title: pr.Title, Status: string(pr.Status), Started: pr.StartedAt, Ended: pr.EndedAt,
			Restarts: pr.Restarts, Error: pr.LastError, Done: in.Signals[pr.ID], Spent: PhaseSpendOf(pr)}
		if e := pr.Economics; e != nil {
			p.Budget = Limits{Tokens: e.Limits.Tokens, Cost: e.Limits.CostUSD}
		}
		for n := 1; n <= pr.Sessions; n++ {
			p.Sessions = append(p.Sessions, &Session{N: n})
		}
		byID[p.ID] = p
		r.Phases = append(r.Phases, p)
	}
	b := &builder{in: in, r: r, phases: byID}
	for _, ev := range in.Events {
		b.event(ev)
	}
	for _, p := range r.Phases {
		for _, s := range p.Sessions {
			b.session(p, s)
			p.Spend = p.Spend.add(s.Spend)
		}
		r.Spend = r.Spend.add(p.Spend)
	}
	b.commits()
	if r.Threshold == 0 {
		r.Threshold = 80
	}
	// Each text judged whole, before rendering (HTML escaping, markdown
	// table cells) could hide a shape: the report leaves debussy like
	// everything else, whoever renders it.
	secrets.Default().Value(r)
	return r
}

type builder struct {
	in     Input
	r      *Report
	phases map[string]*Phase
}

func (b *builder) session(p *Phase, s *Session) {
	d := b.in.Sessions[SessionKey{p.ID, s.N}]
	if d == nil {
		// No stream (a CI job's record): what its end recorded.
		s.Spend.Cost = s.endCost
		return
	}
	s.Model, s.Window, s.Points, s.SubagentTools = d.Model(), d.Window(), d.Points, d.SubagentTools
	for name, n := range d.Tools {
		s.Tools = append(s.Tools, Count{name, n})
	}
	slices.SortFunc(s.Tools, func(a, b Count) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.Name, b.Name))
	})
	t := d.Spent()
	s.Spend = Spend{Tokens: t.Tokens, Cost: t.CostUSD}
	if price, ok := d.price.Lookup(s.Model); ok || s.Model != "" {
		one := [4]budget.Tokens{{Input: t.Tokens.Input}, {CacheRead: t.Tokens.CacheRead}, {CacheWrite: t.Tokens.CacheWrite}, {Output: t.Tokens.Output}}
		var sum float64
		for i, o := range one {
			s.Spend.CostByKind[i] = price.Cost(o)
			sum += s.Spend.CostByKind[i]
		}
		for i := range s.Spend.CostByKind {
			if sum > 0 {
				s.Spend.CostByKind[i] *= t.CostUSD / sum
			}
		}
	}
	for i := range s.Marks {
		m := &s.Marks[i]
		if m.Turn < 0 || m.Turn > len(s.Points) {
			m.Turn = len(s.Points)
		}
	}
	// Runs since the policy package record the done signal as an event;
	// older ones are read from the stream's Bash calls.
	if !slices.ContainsFunc(s.Marks, func(m Mark) bool { return m.Kind == KindDone }) {
		for _, turn := range d.DoneTurns {
			s.Marks = append(s.Marks, Mark{Kind: KindDone, Turn: turn, Text: "the agent ran debussy done"})
		}
	}
	if p.Done != nil && s.N == len(p.Sessions) {
		for i := len(s.Marks) - 1; i >= 0; i-- {
			if s.Marks[i].Kind == KindDone {
				s.Marks[i].Text += " (" + string(p.Done.Status) + ")"
				if p.Done.Reason != "" {
					s.Marks[i].Text += ": " + p.Done.Reason
				}
				break
			}
		}
	}
	slices.SortStableFunc(s.Marks, func(a, b Mark) int { return cmp.Compare(a.Turn, b.Turn) })
}

// event files one events.jsonl line where it belongs.
func (b *builder) event(l record.Line) {
	at := l.TS
	if ev, ok := record.As[record.RunStarted](l); ok {
		if ev.ContextThreshold > 0 {
			b.r.Threshold = ev.ContextThreshold
		}
		if ev.ContextMaxTokens != nil {
			b.r.MaxTokens = int64(*ev.ContextMaxTokens)
		}
		return
	}
	p := b.phases[l.Phase]
	if p == nil {
		return
	}
	var s *Session
	if n := l.Session; n != nil && *n >= 1 && *n <= len(p.Sessions) {
		s = p.Sessions[*n-1]
	}
	if _, ok := record.As[record.SessionSpawned](l); ok {
		if s != nil {
			s.Start, s.started = at, true
		}
		return
	}
	if ev, ok := record.As[record.SessionEnded](l); ok {
		if s != nil {
			s.End, s.endCost = at, ev.CostUSD
			s.Outcome = ev.Outcome
			if ev.Reason != "" {
				s.Outcome += ": " + ev.Reason
			}
		}
		return
	}
	if note, ok := phaseNote(l); ok {
		p.Notes = append(p.Notes, note)
		return
	}
	if ev, ok := record.As[record.Gate](l); ok {
		g := Gate{Name: ev.Gate, Command: deref(ev.Command), Unchecked: ev.Unchecked, ExitCode: deref(ev.ExitCode), End: at,
			Duration: time.Duration(deref(ev.DurationMs)) * time.Millisecond}
		g.Passed = !g.Unchecked && g.ExitCode == 0 && !deref(ev.TimedOut)
		g.AfterSession = lastStarted(p)
		p.Gates = append(p.Gates, g)
		return
	}
	var kind Kind
	var text string
	var turn *int
	var toolUseID, path string
	handoff := false // a handoff_written line: its turn is its path's
	if ev, ok := record.As[record.BudgetLevel](l); ok {
		kind, text, turn = KindBudget, fmt.Sprintf("%s budget %s at %s %%", ev.Scope, ev.Level, pct(ev.UsedPct)), ev.Turn
	} else if ev, ok := record.As[record.Interrupt](l); ok {
		kind, text, turn = KindInterrupt, "interrupted (Ctrl-C)", ev.Turn
	} else if ev, ok := record.As[record.Compaction](l); ok {
		kind, text, turn = KindCompaction, "the CLI compacted its context", ev.Turn
	} else if ev, err := l.Policy(); err == nil {
		if ev.Name == record.ContextWarning && b.r.Threshold == 0 {
			b.r.Threshold = deref(ev.Threshold)
		}
		kind, text = markOf(ev)
		turn, toolUseID, path, handoff = ev.Turn, deref(ev.ToolUseID), deref(ev.Path), ev.Name == record.HandoffWritten
	}
	if s == nil || kind == "" {
		return
	}
	t := -1
	if turn != nil {
		t = *turn
	} else if d := b.in.Sessions[SessionKey{p.ID, s.N}]; d != nil {
		switch {
		case toolUseID != "":
			t = d.ToolTurn(toolUseID)
		case handoff:
			t = d.PathTurn(path)
		}
	}
	s.Marks = append(s.Marks, Mark{Kind: kind, Turn: t, At: at, Text: text})
	switch kind {
	case KindRefusal:
		s.Refusals = append(s.Refusals, text)
	case KindNudge:
		s.Nudges = append(s.Nudges, text)
	}
}

// phaseNote is what an event of the phase's own (a retry, a usage limit,
// a merge...) notes, false for another event.
func phaseNote(l record.Line) (string, bool) {
	if ev, ok := record.As[record.Remediation](l); ok {
		return fmt.Sprintf("attempt %d (remediation): %s", ev.Attempt, ev.Problem), true
	}
	if ev, ok := record.As[record.SessionRetry](l); ok {
		return fmt.Sprintf("session retried after: %s", ev.Why), true
	}
	if ev, ok := record.As[record.UsageLimit](l); ok {
		note := fmt.Sprintf("usage limit (%s) reached; resets %s", ev.Limit, ev.Resets.Format(time.RFC3339Nano))
		if ev.Waiting {
			note += "; waited for it"
		} else {
			note += "; the run ended there (exit 75)"
		}
		return note, true
	}
	if ev, ok := record.As[record.FallbackModel](l); ok {
		return fmt.Sprintf("usage limit (%s): went on with fallback_model %s instead of %s", ev.Limit, ev.To, ev.From), true
	}
	if ev, ok := record.As[record.Merge](l); ok {
		return fmt.Sprintf("merged into your branch at %s", gitcommit.Short(ev.Commit)), true
	}
	if ev, ok := record.As[record.MergeFailed](l); ok {
		return "not merged: " + ev.Error, true
	}
	if ev, ok := record.As[record.BudgetExtension](l); ok {
		return fmt.Sprintf("budget extension %d asked (%s): granted %v", ev.Extension, ev.Spent, ev.Granted), true
	}
	return "", false
}

// markOf is what the policy's event marks on the context curve, "" for
// nothing.
func markOf(ev record.Policy) (Kind, string) {
	switch ev.Name {
	case record.ContextWarning:
		by := "context_threshold"
		if ev.By != "" {
			by = ev.By
		}
		if ev.Tokens != nil && ev.At != nil {
			return KindWarning, fmt.Sprintf("warned at %s (%s %% of the window); the handoff was due at %s (%s)",
				estimator.FormatTokens(*ev.Tokens), pct(deref(ev.Percent)), estimator.FormatTokens(*ev.At), by)
		}
		return KindWarning, fmt.Sprintf("warned at %s %% of the window", pct(deref(ev.Percent)))
	case record.Trigger:
		return KindThreshold, "threshold: " + deref(ev.Reason)
	case record.HandoffRequested:
		return KindHandoff, "handoff requested (" + deref(ev.Reason) + ")"
	case record.HandoffWritten:
		return KindHandoffDone, fmt.Sprintf("handoff written (%d bytes)", deref(ev.Bytes))
	case record.ToolDenied:
		why := ev.Why
		if why == "" {
			why = "handoff first"
		}
		return KindRefusal, fmt.Sprintf("%s refused by debussy (%s)", deref(ev.Tool), why)
	case record.Nudge:
		text := fmt.Sprintf("%s nudge: %s ×%d", ev.Kind, deref(ev.Tool), deref(ev.Count))
		if a := deref(ev.Args); a != "" {
			text += " " + a
		}
		if deref(ev.Restart) {
			text += " (restart)"
		}
		return KindNudge, text
	case record.HookStop:
		return KindStop, "session ended after " + deref(ev.Tool) + ": " + deref(ev.Reason)
	case record.EmergencyStop:
		return KindEmergency, "emergency stop: " + deref(ev.Reason)
	case record.StopBlocked:
		if ev.Why == "handoff" {
			return KindStopBlocked, "turn end refused: handoff first"
		}
		return KindStopBlocked, "turn ended without debussy done: told to signal"
	case record.CompactionBlocked:
		return KindCompaction, "the CLI's compaction was blocked"
	case record.Zone:
		return KindZone, fmt.Sprintf("zone %s (%d tool calls)", ev.Zone, deref(ev.ToolCalls))
	case record.DoneSignal:
		return KindDone, "the agent ran debussy done"
	}
	return "", ""
}

// commits files each commit under the session its trailers name.
func (b *builder) commits() {
	for _, c := range b.in.Commits {
		p := b.phases[c.Trailer("Debussy-Phase")]
		if p == nil || c.Trailer("Debussy-Run") != b.r.RunID {
			continue
		}
		n, _ := strconv.Atoi(c.Trailer("Debussy-Session"))
		if n < 1 || n > len(p.Sessions) {
			n = len(p.Sessions)
		}
		if n < 1 {
			continue
		}
		s := p.Sessions[n-1]
		s.Commits = append(s.Commits, Commit{Hash: c.Hash, Subject: c.Subject, Event: c.Trailer("Debussy-Event"), Changes: c.Changes})
	}
}

func lastStarted(p *Phase) int {
	n := 0
	for _, s := range p.Sessions {
		if s.started {
			n = s.N
		}
	}
	return n
}

// deref is *v, or its zero value for a key the line does not have.
func deref[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}

// pct prints a percentage with at most one decimal.
func pct(p float64) string {
	return strconv.FormatFloat(budget.RoundPct(p), 'f', -1, 64)
}

// Limit is where session s's handoff was due: context_threshold of its
// window or the cap context_max_tokens, whichever is lower, with the
// warning before it — the policy's own numbers.
func (r *Report) Limit(s *Session) policy.ContextLimit {
	return policy.ContextLimitOf(r.Threshold, r.MaxTokens, s.Window)
}

// Percent is the point's share of the session's window.
func (s *Session) Percent(p Point) float64 {
	if s.Window <= 0 {
		return 0
	}
	return float64(p.Tokens) * 100 / float64(s.Window)
}

// Peak is the session's highest context percentage.
func (s *Session) Peak() float64 {
	var m float64
	for _, p := range s.Points {
		m = max(m, s.Percent(p))
	}
	return m
}

// Calls is the session's main-thread tool calls.
func (s *Session) Calls() int {
	n := 0
	for _, c := range s.Tools {
		n += c.Calls
	}
	return n
}
