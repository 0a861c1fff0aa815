package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/cijob"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/notify"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/recorder"
	"github.com/debussy-dev/debussy/remote"
	"github.com/debussy-dev/debussy/sandbox"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/spend"
	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/telemetry"
)

// The run's nouns, beneath the files that act on them: a run (orun), its
// phases (phaseRun), their committer and sessions' launcher, the
// scheduler of --parallel. Each type's methods live in the file of what
// they do; every file depends only on files below it.

// Options are a run's inputs, all resolved by the caller.
type Options struct {
	Config config.Config
	Plan   *plans.Plan
	Repo   *gitcommit.Repo
	Store  *state.Store
	Logger *slog.Logger
	Out    io.Writer // the final summary table
	// OutText lets the summary name each phase's full error (gate output,
	// the agent's words): where Out is a terminal or --log-text says so.
	OutText bool
	SelfDir string // debussy's own directory, put first on the agent's PATH
	// Self is debussy's own executable: only a command running that very
	// file gets debussy's allowance under any permission mode; "" gives
	// none.
	Self        string
	PhaseID     string // --phase: start here
	Only        string // --only: run exactly this phase (selection.go)
	Restart     bool   // --restart: ignore the ledger
	FailFast    bool   // --fail-fast: a failed phase of a --parallel run stops the running others (afterfailure.go)
	Base        string // --base: BaseDeps merges the --only phase's dependencies' branches from the remote first; "" nothing (cijob)
	Push        string // --push REMOTE: push the phase's branch after every commit debussy makes for it; "" pushes nothing (cijob)
	Hard        <-chan struct{}
	Env         []string // the environment claude inherits
	StepSummary string   // GITHUB_STEP_SUMMARY path, if set
	Now         func() time.Time
	// Backoff is the wait before retry n (1-based) of a failed session; nil
	// means retry_backoff doubling up to 1 min.
	Backoff func(n int) time.Duration
	// InterruptGrace bounds how long a Ctrl-C waits for the running tool
	// before the session is killed; 0 means 10 s.
	InterruptGrace time.Duration
	// ExitCode maps the run's error to the exit code the user sees, which
	// the ledger records. commands passes its mapping so exit codes are
	// decided in one place; nil records 0 for success and 1 otherwise.
	ExitCode func(error) int
	// Progress, when set, is told a phase's figures after every stream
	// event (and once when the session ends): the live view, a subscriber
	// of the run's record, called on the recorder's goroutine in order.
	Progress func(Progress)
	// Extend, when set, asks the user whether to extend a budget that ran
	// out (a terminal, never CI): true raises it by its configured amount
	// and the phase goes on. At most budget.max_extensions times per
	// budget; nil never extends. It may block (a person answering) and is
	// called while other phases go on, from one phase at a time or several.
	Extend func(context.Context, ExtendRequest) bool
	// Tracer exports the run's spans (telemetry.Spans); nil exports none.
	Tracer *telemetry.Tracer

	// Sandbox bounds every phase's sessions and gates (sandbox.go); nil
	// runs them unbounded.
	Sandbox *sandbox.Boundary

	// Unblock (--resume-blocked) resumes a blocked phase nobody has
	// answered; without it such a phase stays blocked and starts no session.
	Unblock bool
}

// ExtendRequest is a budget that ran out, put to the user (Options.Extend).
type ExtendRequest struct {
	Phase, Title string
	Scope        string // whose budget: "phase" or "plan"
	Spent        string // what was spent of which dimension: "tokens 101.2K of 100K"
	By           string // what an extension adds, the configured budget: "tokens 100K"
	N, Max       int    // this would be extension N of at most Max of this budget
}

// orun is one `debussy run` in progress: it decides which phases run and
// in which order, and starts them; what happens is the recorder's to
// record (rec).
type orun struct {
	Options
	cfg    config.Config
	limits policy.Limits // what policy.After decides on
	log    *slog.Logger
	id     string
	// ledger is the ledger as loaded: the run's goroutine reads it until
	// the recorder starts (rec.Start), the recorder's goroutine from then
	// on (rec.Read). run is this run's record, the recorder's too, read
	// here again once the recorder closed.
	ledger  *state.Ledger
	run     *state.Run
	rec     *recorder.Recorder
	started bool // the run started (record.RunStarted): its end is recorded
	release func() error
	now     func() time.Time
	// answers are claude's get_context_usage answers, asked once per run
	// for each CLI version and model (session.Answers).
	answers session.Answers
	// recovered are the runs found dead (recover.go): their leftover work
	// in the tree is committed rather than refused as dirty.
	recovered []*state.Run
	// ctx is the run's root context (execute's): git commands, hooks and
	// the pushes that follow commits take it (gitCtx, cijob), so a
	// Ctrl-C cuts a hung one.
	ctx context.Context
	// userFiles are the untracked files present at the start: the
	// user's, left out of this run's commits (userfiles.go).
	userFiles gitcommit.Fingerprints
	// spend is the run's spend against its budgets, one account.
	spend *spend.Account
	// reached is set once a session of the run got an answer from the
	// API: from then on an unreachable API is a blip to retry, before it
	// a setup error (sessions.go).
	reached atomic.Bool
	// job is the run's work with the remote (--base deps, --push).
	job *cijob.Job
	// preview is set for Check (--dry-run): nothing is fetched, so --base
	// deps's dependencies are not required to be done yet.
	preview bool
	// notifier sends the run's notifications; spans are the run's traces
	// (both subscribers of the record: wiring.go).
	notifier *notify.Dispatcher
	spans    *telemetry.Spans
	// launch makes the config of every session of the run (session.go).
	launch *launcher
}

// selection is which phases a run executes (todo) and which it skips,
// with why.
type selection struct {
	todo    map[string]bool
	skipped map[string]record.PhaseSkipped
}

// phaseRun is one phase across its attempts and sessions. What it needs of
// the run comes as narrow values — its sessions, a committer, its side of
// the record (rec: emit a fact, read what its facts made of its record),
// the policy's limits, its files, a clock — never the run itself.
type phaseRun struct {
	ph       *plans.Phase
	rec      *recorder.Phase
	sessions Sessions
	launch   *launcher // what the run's sessions share (session.go)
	commits  *committer
	limits   policy.Limits
	files    phaseFiles
	now      func() time.Time
	cfg      config.Config
	// extend asks the user whether to extend a spent budget (Options.Extend).
	extend func(context.Context, ExtendRequest) bool
	spend  *spend.Phase // the phase's account in this run
	start  phaseStart
	carry  carried
	tries  tries
}

// phaseStart is where a phase starts from: fixed before its first session.
type phaseStart struct {
	plan    *plans.Plan
	planRel string // the plan as the Debussy-Plan trailer names it
	// root is the user's repository root (phase files' paths in prompts
	// are relative to it); dir where the phase's sessions and gates run
	// (the root, or its worktree), env the environment they inherit
	// (repo.ChildEnv: no GIT_DIR sending the agent's git elsewhere).
	root, dir string
	env       []string
	// prev is the earlier run's record of the phase it resumes (prevRun's),
	// nil to start afresh; hold the account's usage limit git records.
	prevRun *state.Run
	prev    *state.PhaseRecord
	hold    *remote.Hold
	// base is the commit the phase started from ("files changed" are
	// against it); basePrompt the phase prompt every prompt ends with.
	base, basePrompt string
	// progressRuns are the runs whose `debussy progress` lines belong to
	// this phase (earlier interrupted runs when resuming).
	progressRuns []string
	// priorAttempts are the attempts of the blocked run this one resumes
	// with the person's answer: the answer starts the next attempt.
	priorAttempts int
	// unblock resumes a blocked phase nobody answered (--resume-blocked).
	unblock bool
	// box is how its sessions start in a bounded run (sandbox.go).
	box *boxedClaude
}

// carried is what the sessions that ended leave the next checkpoint and
// the next session.
type carried struct {
	events      *checkpoint.Recorder // what the agent did, for checkpoints
	window      int64                // learned from the CLI's result, for the next session
	checkpoints int
	lastTrigger time.Time // when the last restart was triggered, for turnaround
	// The agent's handoff file or why there is none; avoid lists the
	// repeated calls of every doom loop in this phase.
	handoff, noHandoff string
	avoid              []string
	// refused are the tool calls debussy itself refused in this phase's
	// sessions of this run, by tool_use id (session.Result.Refused): the
	// checkpoint lists them as debussy's refusals, not the agent's
	// failures.
	refused       map[string]string
	pointsChecked bool // warnCompactionPoint ran
	// undelivered are notes the last session's policy decided but never
	// delivered (its stop came first): the next session hears them first.
	undelivered []string
}

// tries count the current attempt's context restarts and the retries after
// sessions that failed on their own.
type tries struct{ restarts, retries int }

// phaseFiles are where a phase's files are: .debussy/runs/<run>/.
type phaseFiles struct {
	store *state.Store
	run   string
}

// committer is how every commit site commits: a phase's commits, its
// branch's merge into yours (--parallel), a killed run's leftovers, the
// merges of --base deps and of a rejected push. write waits out a git
// process holding the repository's lock (lockWait), lists the commit in
// the record before the branch moves to it (record.CommitListed, synced:
// killed at any moment, debussy never leaves a branch at a commit
// .debussy/ does not list) and takes it back out when it does not land.
// A phase's committer also knows what its commits leave out and pushes
// after each one under --push (cijob.Job.Pushed).
type committer struct {
	// Committer is the repository's own side (seams.go): nil for a
	// committer that only merges.
	Committer
	rec emitter
	// list: commits are listed in phase's record of run ("" this run's).
	list       bool
	run, phase string
	now        func() time.Time
	gitCtx     func() context.Context
	// user are the untracked files of the user's at the start, keep the
	// phase worktree's .worktreeinclude copies: out of every commit.
	user gitcommit.Fingerprints
	keep []string
	// push follows a phase's commit under --push; nil without.
	push func()
}

// emitter is where facts go: the run's recorder or a phase's side of it.
type emitter interface {
	Emit(record.Event)
	Sync() error
}

// launcher makes the configs of a run's sessions: what they share.
type launcher struct {
	cfg           config.Config
	plan          string // the master plan's path
	store         *state.Store
	run           string
	self, selfDir string
	hard          <-chan struct{}
	grace         time.Duration // InterruptGrace
	live          bool          // a live view takes the Meters' figures
	answers       *session.Answers
	// reached is set once a session of the run got an answer from the
	// API: from then on an unreachable API is a blip to retry, before it
	// a setup error.
	reached *atomic.Bool
	// sandbox bounds the sessions and the gates (Options.Sandbox); nil:
	// unbounded.
	sandbox *sandbox.Boundary
	// traceEnv is the TRACEPARENT and resource attributes of a session's
	// span (telemetry.Spans.ChildEnv).
	traceEnv func(phase string, n int) map[string]string
	log      *slog.Logger
}

// scheduler runs a --parallel run's phases: which starts when (a free
// worker, its dependencies merged), their worktrees, their merges into the
// user's branch, --fail-fast. Its state is its goroutine's alone.
type scheduler struct {
	r *orun
	// includes are the files .worktreeinclude selects, listed once.
	includes *[]gitcommit.IgnoredFile
}

// slot is one phase running in its worktree.
type slot struct {
	ph           *plans.Phase
	rec          *recorder.Phase
	path, branch string
	repo         *gitcommit.Repo
	includes     []gitcommit.IgnoredFile // to copy in (worktreefiles.go)
	keep         []string                // their paths: the phase's commits leave them out
	// reused: an interrupted run's worktree, readied then; newBranch: the
	// branch was made for it; discard: nothing of the agent's in it, so
	// it goes, and its branch too when new.
	reused, newBranch, discard bool
	cancel                     context.CancelCauseFunc // stops the phase at a safe point
	held                       *gitcommit.Placeholders // claude's sandbox's files in its git dir
}

type phaseResult struct {
	id  string
	err error
}

// boxedClaude is how a bounded phase starts claude.
type boxedClaude struct {
	wrapper   []string
	env       map[string]string
	extraArgs []string       // extra_args without a --settings of the user's
	settings  map[string]any // theirs, with the CLI's own sandbox block
	scope     sandbox.Scope  // what the phase may write: its gates' too
}
