package tune

import (
	"fmt"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/history"
	"github.com/debussy-dev/debussy/policy"
)

// A replay feeds a stream's turns, at a candidate's settings, to the
// estimator and the policy a run uses — policy.New, Observe, PreToolUse,
// PostToolUse, Stop and, after each session, policy.After — in the order a
// session feeds them (package session: each response's usage observed
// before its tools' hooks, a PostToolUse before the tool's result in the
// stream, a failed tool judged from the stream alone). Nothing here
// decides: where a run would warn, ask for the handoff, refuse, stop or
// restart is the policy's answer. What the replay models is what the
// agent and the CLI would do: the context a turn adds (as recorded), the
// handoff the agent writes on the turn after it is asked for (the handoff
// turn), and a restarted session's first context (the restart prompt).

// cfgMinProbability only words an adaptive restart's reason.
const cfgMinProbability = 0.5

// handoffPath is where a replayed session is told to write its handoff.
const (
	replayRoot  = "/replay"
	handoffPath = "/replay/.debussy/handoff.md"
)

// turnOut is one replayed API response.
type turnOut struct {
	ctx   int64
	usage budget.Tokens
}

// streamOut is what a stream did under one candidate.
type streamOut struct {
	sessions      int
	restarts      []int // positions where a restart's session began
	outOfRestarts bool  // a restart was due with max_restarts spent: the phase failed there
	turns         []turnOut
}

// replaySession is one session's policy and estimator, fed like package
// session feeds them: each event observed (estimator, then policy), a
// hook call observed and then answered by policy.Hook, the run's own
// dispatch, with the facts the recording gives.
type replaySession struct {
	pol      *policy.Policy
	est      *estimator.Estimator
	model    string
	msgs     int
	facts    replayFacts
	adaptive bool // an adaptive budget's restarts are replayed where they happened
}

// replayFacts are the facts on disk as the recording says they were: the
// done and handoff signals from the turn the agent sent them, the
// handoff's size once the replay's handoff turn has written it.
type replayFacts struct {
	done, handedOff bool
	handoff         int64
}

func (f *replayFacts) Signalled() bool        { return f.done }
func (f *replayFacts) SignalStatus() string   { return "" } // it only words the log
func (f *replayFacts) HandedOff() bool        { return f.handedOff }
func (f *replayFacts) HandoffSize() int64     { return f.handoff }
func (f *replayFacts) PhaseFile(*policy.Call) {} // only a budget asks, and budgets are not replayed

func newReplaySession(cfg config.Config, window int64, model string, carried []string) *replaySession {
	pc := policy.ConfigOf(cfg, "replay", handoffPath, replayRoot)
	return &replaySession{
		pol:      policy.New(pc, carried),
		est:      estimator.New(estimator.Config{Window: window}),
		model:    model,
		adaptive: cfg.Budget.Enforcement == config.EnforceAdaptive,
	}
}

func (s *replaySession) observe(ev event.Event) {
	snap := s.est.Observe(ev)
	s.pol.Observe(ev, snap)
}

// hook is one hook call: observed like every event, then answered.
func (s *replaySession) hook(h *event.HookCall) event.HookAnswer {
	s.observe(event.Event{Kind: event.KindHook, Hook: h})
	return s.pol.Hook(h, &s.facts)
}

// response feeds one API response of usage u making t's calls (nil: a
// response without any), each with its hooks and its result as the CLI
// sends them; it reports whether any call was refused.
func (s *replaySession) response(u budget.Tokens, t *history.Turn) (refused bool) {
	s.msgs++
	a := &event.Assistant{MessageID: fmt.Sprintf("msg_%d", s.msgs), Model: s.model, Usage: event.Usage{
		InputTokens: u.Input, OutputTokens: u.Output, CacheReadInputTokens: u.CacheRead, CacheCreationInputTokens: u.CacheWrite}}
	var calls []history.Call
	if t != nil {
		calls = t.Calls
	}
	for _, c := range calls {
		a.ToolUses = append(a.ToolUses, event.ToolUse{ID: c.ID, Name: c.Name, Input: c.Input, Command: c.Command, FilePath: c.FilePath})
	}
	s.observe(event.Event{Kind: event.KindAssistant, Assistant: a})
	if t == nil {
		t = &history.Turn{}
	}
	if t.Adaptive && s.adaptive {
		// The quarter's evaluation is the budget's (on spend and tasks
		// done, not replayed); where it restarted, the policy is asked as
		// the session asked it.
		s.pol.Quarter(budget.Quarter{Decision: budget.Restart}, cfgMinProbability)
	}
	// The agent's signals are on disk from the turn that sent them.
	s.facts.done = s.facts.done || t.Done
	s.facts.handedOff = s.facts.handedOff || t.HandedOff
	if len(calls) == 0 {
		s.hook(&event.HookCall{Event: event.HookStop}) // the agent ended its turn
		return false
	}
	for _, c := range calls {
		if ans := s.hook(&event.HookCall{Event: event.HookPreToolUse, ToolName: c.Name, ToolUseID: c.ID, ToolInput: c.Input}); ans.Deny != "" {
			// The CLI hands the refusal back as the tool's error.
			refused = true
			s.observe(event.Event{Kind: event.KindToolResult, ToolResults: []event.ToolResult{{ToolUseID: c.ID, IsError: true,
				Content: ans.Deny, ContentLen: len(ans.Deny)}}})
			continue
		}
		if c.NoResult {
			continue // the session ended before the tool did
		}
		if !c.IsError {
			// A failed tool gets no PostToolUse: the policy judges it from
			// the stream's result.
			s.hook(&event.HookCall{Event: event.HookPostToolUse, ToolName: c.Name, ToolUseID: c.ID, ToolInput: c.Input, ToolResponse: c.Result})
		}
		s.observe(event.Event{Kind: event.KindToolResult, ToolResults: []event.ToolResult{{ToolUseID: c.ID, IsError: c.IsError,
			Content: c.Result, ContentLen: c.ResultLen}}})
	}
	return refused
}

// handoff is the turn on which the agent writes the handoff it was asked
// for: a Write of the handoff file, whose PostToolUse finds it written.
func (s *replaySession) handoff(u budget.Tokens) {
	input := fmt.Appendf(nil, `{"file_path":%q,"content":"## Completed\n"}`, handoffPath)
	t := &history.Turn{Calls: []history.Call{{ID: fmt.Sprintf("handoff_%d", s.msgs+1), Name: "Write", Input: input,
		FilePath: handoffPath, Result: "File created successfully at: " + handoffPath}}}
	s.facts.handoff = int64(len(input))
	s.response(u, t)
}

// stopping reports whether the session ends after the current response.
func (s *replaySession) stopping() bool {
	return s.pol.State() == policy.Stopping || s.pol.StopReason() != ""
}

// ended is the session's end as policy.After takes it.
func (s *replaySession) ended(stopped bool, restarts int, limits policy.Limits) (policy.Step, policy.Outcome) {
	s.pol.Signals(s.facts.done, s.facts.handedOff) // the stream is over: the signals once more
	o := s.pol.Outcome()
	e := policy.Ended{Done: o.Done, Signalled: s.facts.done, Trigger: o.Trigger, Reason: o.Reason,
		Stopped: stopped && o.Trigger != "", Completed: !stopped || o.Trigger == "",
		Restarts: restarts, Limits: limits}
	return policy.After(e), o
}

// replay plays w under cfg (the candidate's settings) with the model m.
func replay(w *work, cfg config.Config, window int64, m *model) streamOut {
	var out streamOut
	limits := policy.Limits{Restarts: cfg.MaxRestarts}
	restarts := 0
	var carried []string
	next, restartAt := 0, -1 // restartAt: the session starting at next follows a restart
	// Each pass starts one session; a bound keeps a stream whose restart
	// prompt alone crosses the threshold from looping past max_restarts.
	for guard := 0; next < len(w.pos) && guard < len(w.pos)+cfg.MaxRestarts+2; guard++ {
		out.sessions++
		s := newReplaySession(cfg, window, w.stream.Model, carried)
		i := next
		var ctx int64
		stopped, endAt := false, len(w.pos)
		for j := i; j < len(w.pos); j++ {
			p := &w.pos[j]
			var u budget.Tokens
			switch {
			case j == i && (restartAt == i || p.start == 0):
				// A restart's session (or one the replay begins mid-stream)
				// starts from the restart prompt.
				ctx, u = m.restartUsage(p)
			case j == i:
				ctx, u = p.start, p.recUsage
			case p.brk != "":
				endAt = j // the recording began a new session here
			default:
				ctx += m.delta(p)
				u = shifted(p, ctx)
			}
			if endAt == j {
				break
			}
			out.turns = append(out.turns, turnOut{ctx: ctx, usage: u})
			t := p.turn
			if j == i && restartAt == i && p.redo != nil {
				t = p.redo
			}
			refused := s.response(u, t)
			if s.pol.State() == policy.HandoffRequested {
				// The agent writes its handoff on the next turn.
				hu := m.handoffUsage(ctx, u)
				out.turns = append(out.turns, turnOut{ctx: hu.Input + hu.CacheRead + hu.CacheWrite, usage: hu})
				s.handoff(hu)
			}
			if s.stopping() {
				stopped = true
				endAt = j + 1
				if refused || s.pol.State() == policy.HandoffRequested {
					endAt = j // its calls did not run: the next session redoes them
				}
				break
			}
		}
		step, o := s.ended(stopped, restarts, limits)
		carried = o.Undelivered
		restartAt = -1
		switch step.Kind {
		case policy.StepRestart:
			restarts = step.N
			restartAt = endAt
			out.restarts = append(out.restarts, endAt)
		case policy.StepRestartsSpent:
			out.outOfRestarts = true
			return out
		}
		if step.Kind == policy.StepFinish && (o.Done || s.facts.done) {
			// The agent signalled done: the attempt is over. What the
			// recording did after it belongs to the next attempt, if any.
			for endAt < len(w.pos) && w.pos[endAt].brk == "" {
				endAt++
			}
		}
		if endAt < len(w.pos) && w.pos[endAt].brk == history.EndAttempt && restartAt < 0 {
			restarts = 0 // a remediation is a new attempt
		}
		if endAt == i && restartAt < 0 {
			endAt = i + 1 // never replay the same place twice without a restart
		}
		next = endAt
	}
	return out
}
