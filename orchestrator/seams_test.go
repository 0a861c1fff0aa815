package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/recorder"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/spend"
	"github.com/debussy-dev/debussy/state"
)

// The decisions between sessions, played through the Sessions and
// Committer seams: no claude process, no git repository, milliseconds per
// case. The end-to-end suite (tests/) plays the same paths with the real
// CLI and git.

// scripted is a Sessions whose sessions end as scripted, one Result each
// in order; it keeps each session's Config.
type scripted struct {
	ends    []session.Result
	configs []session.Config
	// exhaust, for session n (1-based), is what its budget's stop says ran
	// out, as the real session writes it into Config.Budget; spend is the
	// input tokens its one API call used, counted by its Meters as the
	// real session counts them.
	exhaust map[int]string
	spend   map[int]int64
}

func (s *scripted) Start(_ context.Context, cfg session.Config) (Session, error) {
	s.configs = append(s.configs, cfg)
	n := len(s.configs)
	if n > len(s.ends) {
		return nil, errors.New("no session scripted")
	}
	if tokens := s.spend[n]; tokens > 0 && cfg.Meters != nil {
		cfg.Meters.Observe(event.Event{Kind: event.KindAssistant, Assistant: &event.Assistant{
			MessageID: fmt.Sprintf("msg_%d", n), Model: "claude-sonnet-4-5", Usage: event.Usage{InputTokens: tokens}}})
	}
	if why := s.exhaust[n]; why != "" {
		cfg.Budget.Exhausted = why
	}
	return over(s.ends[n-1]), nil
}

// over is a session that has ended with res: no effect, then its result.
type over session.Result

func (o over) Ready() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
func (o over) Take() ([]session.Effect, bool) { return nil, true }
func (o over) Wait() session.Result           { return session.Result(o) }

// ledgerFake is a Committer keeping what was committed and written.
type ledgerFake struct {
	mu          sync.Mutex
	commits     []string // their messages
	checkpoints []string
}

func (l *ledgerFake) Head() (string, error) { return "base", nil }

func (l *ledgerFake) CommitAll(_ context.Context, msg string, _ ...gitcommit.CommitOption) (gitcommit.Commit, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.commits = append(l.commits, msg)
	return gitcommit.Commit{Hash: "c" + string(rune('0'+len(l.commits)))}, nil
}

func (l *ledgerFake) Changes(string) ([]gitcommit.Change, error) { return nil, nil }

func (l *ledgerFake) WriteCheckpoint(path string, _ checkpoint.Checkpoint) error {
	l.checkpoints = append(l.checkpoints, filepath.Base(path))
	return nil
}

// trailer is the value of key in each commit's trailers, in order.
func (l *ledgerFake) trailer(key string) []string {
	var out []string
	for _, m := range l.commits {
		for _, t := range gitcommit.ParseTrailers(m) {
			if t.Key == key {
				out = append(out, t.Value)
			}
		}
	}
	return out
}

// fakePhase is phase 1 of a run with cfg, its narrow dependencies given
// by hand: its sessions and commits faked, its record on a recorder of
// its own, its clock now, its backoff and extension the test's.
func fakePhase(t *testing.T, cfg config.Config, backoff func(int) time.Duration, s *scripted, now time.Time,
	extend func(context.Context, ExtendRequest) bool) (*phaseRun, *ledgerFake) {
	t.Helper()
	clock := func() time.Time { return now }
	store := state.New(filepath.Join(t.TempDir(), state.DirName))
	rec := recorder.Start(recorder.Options{Store: store, Run: &state.Run{ID: "r"}, Now: clock})
	t.Cleanup(func() { _ = rec.Close() })
	rec.Emit(record.RunStarted{Plan: "plan.md", Phases: 1, Order: []record.PlannedPhase{{ID: "1", Title: "One"}}})
	ph := rec.Phase("1")
	ph.Emit(record.PhaseStarted{Phase: "1", Title: "One", Base: "base", Attempt: 1})
	l := &ledgerFake{}
	var reached atomic.Bool
	p := &phaseRun{ph: &plans.Phase{ID: "1", Title: "One", Path: filepath.Join(t.TempDir(), "phase-1.md")}, rec: ph, sessions: s,
		launch:  &launcher{cfg: cfg, store: store, run: "r", answers: &session.Answers{}, reached: &reached},
		commits: &committer{Committer: l, rec: ph, list: true, phase: "1", now: clock, gitCtx: context.Background},
		limits:  policy.LimitsOf(cfg, backoff), files: phaseFiles{store: store, run: "r"}, now: clock, cfg: cfg, extend: extend,
		start: phaseStart{plan: &plans.Plan{Path: "plan.md"}, planRel: "plan.md", dir: t.TempDir(), base: "base", basePrompt: "THE PHASE PROMPT"},
		carry: carried{events: checkpoint.NewRecorder()}}
	p.spend = spend.New(cfg.Budget, now).Phase(ph.Record(), nil)
	return p, l
}

// Results a session can end with.
var (
	doneEnd = session.Result{Done: true, Outcome: runner.Outcome{Kind: runner.OutcomeCompleted}}
	fullEnd = session.Result{Trigger: estimator.TriggerContext, Reason: "context at 81%",
		Outcome: runner.Outcome{Kind: runner.OutcomeStopped}}
	crashEnd = session.Result{Outcome: runner.Outcome{Kind: runner.OutcomeCrashed,
		Failure: failure.Failure{Class: failure.Crashed, Reason: "claude exited without a result"}}}
	budgetEnd = session.Result{Trigger: policy.TriggerBudget, Reason: "the phase's budget ran out",
		Outcome: runner.Outcome{Kind: runner.OutcomeStopped}}
)

func limitEnd(typ string, resets time.Time) session.Result {
	return session.Result{Outcome: runner.Outcome{Kind: runner.OutcomeAPIError,
		Failure: failure.Failure{Class: failure.UsageLimit, Reason: "usage limit reached", LimitType: typ, Resets: resets}}}
}

func TestSessionsLoopWithoutAProcess(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name   string
		cfg    func(*config.Config)
		ends   func(now time.Time) []session.Result
		budget map[int]string
		spend  map[int]int64
		extend bool // the user says yes to every extension
		// want: the loop's error (nil: finished), the sessions started,
		// the commits' events, the backoff's calls and the checkpoints.
		wantErr     error
		sessions    int
		commits     []string
		backoffs    []int
		checkpoints int
		check       func(t *testing.T, p *phaseRun, s *scripted, l *ledgerFake)
	}{
		{
			name:     "the first session finishes",
			ends:     func(time.Time) []session.Result { return []session.Result{doneEnd} },
			sessions: 1,
		},
		{
			name:     "a full context restarts from a checkpoint",
			cfg:      func(c *config.Config) { c.MaxRestarts = 2 },
			ends:     func(time.Time) []session.Result { return []session.Result{fullEnd, fullEnd, doneEnd} },
			sessions: 3, commits: []string{"restart", "restart"}, checkpoints: 2,
			check: func(t *testing.T, p *phaseRun, s *scripted, _ *ledgerFake) {
				if p.rec.Record().Restarts != 2 || p.tries.restarts != 2 {
					t.Errorf("restarts: record %d, attempt %d; want 2, 2", p.rec.Record().Restarts, p.tries.restarts)
				}
				for i, c := range s.configs[1:] {
					if !strings.HasSuffix(c.Spec.Prompt, "THE PHASE PROMPT") || c.Spec.Prompt == "THE PHASE PROMPT" {
						t.Errorf("session %d's prompt is not a checkpoint ending with the phase prompt:\n%s", i+2, c.Spec.Prompt)
					}
				}
			},
		},
		{
			name: "debussy's refusals of every session reach the checkpoints",
			cfg:  func(c *config.Config) { c.MaxRestarts = 2 },
			ends: func(time.Time) []session.Result {
				first, second := fullEnd, fullEnd
				first.Refused = map[string]string{"toolu_1": "handoff"}
				second.Refused = map[string]string{"toolu_2": "budget"}
				return []session.Result{first, second, doneEnd}
			},
			sessions: 3, commits: []string{"restart", "restart"}, checkpoints: 2,
			check: func(t *testing.T, p *phaseRun, _ *scripted, _ *ledgerFake) {
				if want := map[string]string{"toolu_1": "handoff", "toolu_2": "budget"}; !maps.Equal(p.carry.refused, want) {
					t.Errorf("refused %v, want %v", p.carry.refused, want)
				}
			},
		},
		{
			name:     "max_restarts spent ends the phase failed",
			cfg:      func(c *config.Config) { c.MaxRestarts = 1 },
			ends:     func(time.Time) []session.Result { return []session.Result{fullEnd, fullEnd} },
			wantErr:  ErrPhaseFailed,
			sessions: 2, commits: []string{"restart", "failed"}, checkpoints: 1,
			check: func(t *testing.T, p *phaseRun, _ *scripted, _ *ledgerFake) {
				if p.rec.Record().Status != state.StatusFailed || !strings.Contains(p.rec.Record().LastError, "max restarts (1) exceeded") {
					t.Errorf("record: %s, %q", p.rec.Record().Status, p.rec.Record().LastError)
				}
			},
		},
		{
			name:     "a crash is retried after the backoff",
			ends:     func(time.Time) []session.Result { return []session.Result{crashEnd, crashEnd, doneEnd} },
			sessions: 3, commits: []string{"retry", "retry"}, backoffs: []int{1, 2}, checkpoints: 2,
		},
		{
			name: "retries spent end the phase failed",
			ends: func(time.Time) []session.Result {
				return []session.Result{crashEnd, crashEnd, crashEnd, crashEnd}
			},
			wantErr:  ErrPhaseFailed,
			sessions: policy.MaxSessionRetries + 1, commits: []string{"retry", "retry", "retry", "failed"},
			backoffs: []int{1, 2, 3}, checkpoints: 3,
		},
		{
			name: "a usage limit that resets within usage_limit_wait is waited out",
			ends: func(now time.Time) []session.Result {
				// Reset already passed: the wait is its buffer at most, in
				// the test's fixed clock none.
				return []session.Result{limitEnd("five_hour", now.Add(-time.Minute)), doneEnd}
			},
			sessions: 2, commits: []string{"retry"}, checkpoints: 1,
			check: func(t *testing.T, p *phaseRun, _ *scripted, _ *ledgerFake) {
				if p.rec.Record().UsageLimits != 1 || !p.rec.Record().WaitingUntil.IsZero() || p.tries.restarts != 0 || p.tries.retries != 0 {
					t.Errorf("usage limits %d, waiting until %s, restarts %d, retries %d; want 1, none, 0, 0",
						p.rec.Record().UsageLimits, p.rec.Record().WaitingUntil, p.tries.restarts, p.tries.retries)
				}
			},
		},
		{
			name: "a usage limit past usage_limit_wait ends the run (exit 75)",
			cfg:  func(c *config.Config) { c.UsageLimitWait = config.Duration(time.Hour) },
			ends: func(now time.Time) []session.Result {
				return []session.Result{limitEnd("five_hour", now.Add(3*time.Hour))}
			},
			wantErr:  ErrUsageLimit,
			sessions: 1, commits: []string{"retry"}, checkpoints: 1,
			check: func(t *testing.T, p *phaseRun, _ *scripted, l *ledgerFake) {
				if p.rec.Record().Status != state.StatusInterrupted || p.rec.Record().WaitingUntil.IsZero() {
					t.Errorf("record: %s, waiting until %s; want interrupted with the reset", p.rec.Record().Status, p.rec.Record().WaitingUntil)
				}
				if got := l.trailer("Debussy-Usage-Limit"); len(got) != 1 || !strings.HasPrefix(got[0], "five_hour") {
					t.Errorf("Debussy-Usage-Limit trailers %q, want the limit and its reset", got)
				}
			},
		},
		{
			name: "a model's limit goes on at once with fallback_model",
			cfg:  func(c *config.Config) { c.Model, c.FallbackModel = "claude-opus-4-1", "claude-sonnet-4-5" },
			ends: func(now time.Time) []session.Result {
				return []session.Result{limitEnd("seven_day_opus", now.Add(48*time.Hour)), doneEnd}
			},
			sessions: 2, commits: []string{"retry"}, checkpoints: 1,
			check: func(t *testing.T, p *phaseRun, s *scripted, _ *ledgerFake) {
				if got := s.configs[1].Spec.Model; got != "claude-sonnet-4-5" {
					t.Errorf("session 2 ran %q, want the fallback model", got)
				}
			},
		},
		{
			name:     "a spent budget nobody extends ends the phase",
			cfg:      func(c *config.Config) { c.Budget.Phase.Tokens, c.Budget.MaxExtensions = 100_000, 1 },
			ends:     func(time.Time) []session.Result { return []session.Result{budgetEnd} },
			budget:   map[int]string{1: "phase tokens 101K of 100K"},
			spend:    map[int]int64{1: 101_000},
			wantErr:  ErrBudgetExhausted,
			sessions: 1, commits: []string{"failed"},
			check: func(t *testing.T, p *phaseRun, _ *scripted, _ *ledgerFake) {
				if p.rec.Record().Economics == nil || !p.rec.Record().Economics.Exhausted {
					t.Errorf("economics %+v: want exhausted", p.rec.Record().Economics)
				}
			},
		},
		{
			name:     "a budget the user extends goes on from a checkpoint",
			cfg:      func(c *config.Config) { c.Budget.Phase.Tokens, c.Budget.MaxExtensions = 100_000, 1 },
			ends:     func(time.Time) []session.Result { return []session.Result{budgetEnd, doneEnd} },
			budget:   map[int]string{1: "phase tokens 101K of 100K"},
			spend:    map[int]int64{1: 101_000},
			extend:   true,
			sessions: 2, commits: []string{"restart"}, checkpoints: 1,
			check: func(t *testing.T, p *phaseRun, _ *scripted, _ *ledgerFake) {
				if p.rec.Record().Restarts != 1 || p.tries.restarts != 0 {
					t.Errorf("restarts: record %d, counted %d; want 1, 0 (the user's choice is no restart of max_restarts)", p.rec.Record().Restarts, p.tries.restarts)
				}
				if e := p.rec.Record().Economics; e == nil || e.Extensions != 1 || e.Limits.Tokens != 200_000 {
					t.Errorf("economics %+v: want one extension, to 200K", e)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.AutoCommit = true
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			var backoffs []int
			backoff := func(n int) time.Duration { backoffs = append(backoffs, n); return 0 }
			s := &scripted{ends: tt.ends(now), exhaust: tt.budget, spend: tt.spend}
			var extend func(context.Context, ExtendRequest) bool
			if tt.extend {
				extend = func(context.Context, ExtendRequest) bool { return true }
			}
			p, l := fakePhase(t, cfg, backoff, s, now, extend)
			err := p.runSessions(context.Background(), p.start.basePrompt)
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("runSessions: %v, want %v", err, tt.wantErr)
			}
			if len(s.configs) != tt.sessions {
				t.Errorf("%d sessions, want %d", len(s.configs), tt.sessions)
			}
			if got := strings.Join(l.trailer("Debussy-Event"), " "); got != strings.Join(tt.commits, " ") {
				t.Errorf("commits %q, want %q", got, strings.Join(tt.commits, " "))
			}
			if fmt.Sprint(backoffs) != fmt.Sprint(tt.backoffs) && len(backoffs)+len(tt.backoffs) > 0 {
				t.Errorf("backoff asked for retries %v, want %v", backoffs, tt.backoffs)
			}
			if len(l.checkpoints) != tt.checkpoints {
				t.Errorf("%d checkpoints written, want %d", len(l.checkpoints), tt.checkpoints)
			}
			if tt.check != nil {
				tt.check(t, p, s, l)
			}
		})
	}
}
