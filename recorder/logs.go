package recorder

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/worktree"
)

// Logger is the subscriber that tells the run's log what happened: each
// fact's line (or none), in the words the log has always used.
type Logger struct {
	log  *slog.Logger
	run  string // the run's id
	root string // the repository root: paths are shown relative to it
	// resumed are the phases resumed from an earlier run (its id), until
	// their first checkpoint.
	resumed map[string]string
}

// NewLogger logs the facts of run runID, paths relative to root.
func NewLogger(log *slog.Logger, runID, root string) *Logger {
	return &Logger{log: log, run: runID, root: root, resumed: map[string]string{}}
}

// Fact logs f.
func (l *Logger) Fact(f Fact, run *state.Run) {
	switch ev := f.Event.(type) {
	case Log:
		l.log.Log(context.Background(), ev.Level, ev.Msg, ev.Args...)
	case Spend:
	default:
		if level, msg, args := l.line(f, run); msg != "" {
			l.log.Log(context.Background(), level, msg, args...)
		}
	}
}

var (
	info  = slog.LevelInfo
	warn  = slog.LevelWarn
	errL  = slog.LevelError
	debug = slog.LevelDebug
)

// line is f's log line: its level, message and attributes ("" for none).
func (l *Logger) line(f Fact, run *state.Run) (slog.Level, string, []any) {
	switch ev := f.Event.(type) {
	case record.RunStarted:
		return info, "run started", []any{"run", l.run, "plan", ev.Name, "phases", ev.Phases}
	case record.PhaseSkipped:
		if ev.Why == "" {
			return info, "", nil // before --phase: not done, not run
		}
		return info, "phase skipped", []any{"phase", ev.Phase, "why", public.Own(ev.Why)}
	case record.StaleRun:
		if ev.Processes > 0 {
			l.log.Warn("killed processes left by a run that died", "run", ev.Run, "processes", ev.Processes)
		}
		return warn, "an earlier run died without saving; resuming where it stopped", []any{"run", ev.Run, "pid", ev.PID}
	case record.LeftoverCommit:
		if ev.Phase != "" {
			return info, "committed the work an interrupted run left", []any{"phase", ev.Phase, "commit", short(ev.Commit), "files", ev.Files}
		}
		return info, "committed the work an interrupted run left", []any{"commit", short(ev.Commit), "files", ev.Files, "run", ev.Run}
	case record.ResumeDiscarded:
		return warn, "not resuming from an earlier run: its work was discarded from git; the phase starts fresh",
			[]any{"phase", ev.Phase, "run", ev.Run, "why", public.Own(ev.Why)}
	case record.PhaseResumed:
		l.resumed[ev.Phase] = ev.Run // said with its checkpoint, which counts the files
		return info, "", nil
	case record.Checkpoint:
		run, ok := l.resumed[ev.Phase]
		if !ok || ev.Kind != "resume" {
			return info, "", nil
		}
		delete(l.resumed, ev.Phase)
		return info, "resuming the phase from a checkpoint", []any{"phase", ev.Phase, "run", run, "files_changed", ev.Files}
	case record.Answered:
		return info, "resuming the blocked phase with the person's answer", []any{"phase", ev.Phase, "attempt", ev.Attempt}
	case record.Unanswered:
		return warn, "resuming the blocked phase without an answer (--resume-blocked)",
			[]any{"phase", ev.Phase, "question", ev.Question, "answer_with", state.AnswerCommand(ev.Phase)}
	case record.StillBlocked:
		return warn, "the phase is still blocked: no session starts until its question is answered",
			[]any{"phase", ev.Phase, "question", ev.Question, "answer_with", state.AnswerCommand(ev.Phase),
				"or", "run again with --resume-blocked to resume it unanswered"}
	case record.UsageLimitHold:
		return warn, fmt.Sprintf("the account's %s limit, met by phase %s (commit %s), resets %s: no session starts before then",
			failure.LimitName(ev.Limit), ev.ByPhase, short(ev.Commit), failure.ResetClock(ev.Resets, f.At)), []any{"phase", ev.Phase}
	case record.PhaseStarted:
		return info, "phase started", []any{"phase", ev.Phase, "title", ev.Short}
	case record.Remediation:
		return warn, "phase not done: starting a remediation session",
			[]any{"phase", ev.Phase, "problem", public.Words(ev.ProblemPublic, ev.Problem), "remediation", ev.Remediation, "max_retries", ev.MaxRetries}
	case record.PhaseEnded:
		return phaseEnded(ev, run)
	case record.SessionEnded:
		return info, "session ended", []any{"phase", ev.Phase, "session", ev.Session, "outcome", public.Words(ev.DescribedPublic, ev.Described),
			"context_percent", int(ev.Percent), "tool_calls", ev.ToolCalls}
	case record.Restart:
		if ev.Extension {
			return info, "restarting the session from a checkpoint after the budget's extension", []any{"phase", ev.Phase}
		}
		return info, "restarting the session from a checkpoint", []any{"phase", ev.Phase, "restart", ev.Restart, "max_restarts", ev.Of}
	case record.SessionRetry:
		return warn, "session failed: retrying from a checkpoint", []any{"phase", ev.Phase, "why", public.Words(ev.Why, cmp.Or(ev.Error, ev.Why)),
			"wait", time.Duration(ev.WaitMs) * time.Millisecond, "retry", ev.Retry, "max_retries", ev.MaxRetries}
	}
	return l.workLine(f, run)
}

// workLine is the line of a fact about commits, pushes, gates, budgets,
// worktrees and waits.
func (l *Logger) workLine(f Fact, _ *state.Run) (slog.Level, string, []any) {
	switch ev := f.Event.(type) {
	case record.CommitRejected:
		if ev.Empty {
			return warn, "a hook refused the empty commit that records the phase's end in git; .debussy/ still has it",
				[]any{"phase", ev.Phase, "event", ev.Kind, "hook", ev.Hook, "output", text.Tail(ev.Output, 500)}
		}
		return warn, "commit rejected by a hook: the work stays in the tree", []any{"phase", ev.Phase, "event", ev.Kind,
			"hook", ev.Hook, "exit_code", ev.ExitCode, "output", text.Tail(ev.Output, 2000)}
	case record.CommitNothing:
		return debug, "nothing to commit", []any{"phase", ev.Phase, "event", ev.Kind}
	case record.CommitFailed:
		return errL, "commit failed: the work stays in the tree", []any{"phase", ev.Phase, "event", ev.Kind, "err", errOf(ev.Err, ev.Error)}
	case record.Commit:
		return info, "committed", []any{"phase", ev.Phase, "commit", short(ev.Commit), "files", ev.Files, "event", ev.Kind}
	case record.Unstaged:
		return warn, "the agent staged files copied in from " + worktree.IncludeFile + "; they stay in the worktree, out of the commit and the index",
			[]any{"phase", ev.Phase, "files", strings.Join(ev.Files, ", ")}
	case record.LockWait:
		return warn, "a git process holds the repository's lock: waiting for it to finish",
			[]any{"for_at_most", time.Duration(ev.ForMs) * time.Millisecond, "err", errOf(ev.Err, ev.Error)}
	case record.PushFailed:
		if ev.Final {
			return errL, "push failed", []any{"phase", ev.Phase, "err", public.Own(ev.Error)} // git's words about the remote
		}
		return warn, "push failed: the commit stays in your branch; debussy pushes it again after the phase, or the same command pushes it first",
			[]any{"phase", ev.Phase, "branch", ev.Branch, "remote", ev.Remote, "err", public.Own(ev.Error)}
	case record.Push:
		if ev.Commit == nil {
			return info, "", nil
		}
		return info, "pushed", []any{"phase", ev.Phase, "branch", ev.Branch, "remote", ev.Remote, "commit", short(*ev.Commit)}
	case record.PushRejected:
		return warn, "push rejected: the remote branch moved on; fetching and merging it", []any{"phase", ev.Phase, "branch", ev.Branch, "try", ev.Try}
	case record.RemoteResume:
		return info, "took up the phase's branch from the remote", []any{"phase", ev.Phase, "branch", ev.Branch, "remote", ev.Remote,
			"commit", short(ev.Commit)}
	case record.BaseMerge:
		return info, "merged a dependency's result", []any{"phase", ev.Phase, "dependency", ev.Dependency, "branch", ev.Branch,
			"commit", short(ev.Commit)}
	case record.ExtensionSkipped:
		if ev.Meanwhile {
			return info, "budget already extended while the user was asked", []any{"phase", ev.Phase, "scope", ev.Scope}
		}
		if ev.MaxExtensions > 0 {
			return info, "budget not extended: max_extensions reached", []any{"phase", ev.Phase, "scope", ev.Scope, "max_extensions", ev.MaxExtensions}
		}
	case record.BudgetExtension:
		if ev.Granted {
			return warn, "budget extended by the user", []any{"phase", ev.Phase, "scope", ev.Scope, "by", ev.By, "spent", ev.Spent,
				"extension", ev.Extension, "max_extensions", ev.MaxExtensions}
		}
	case record.GateStarted:
		return info, "gate running", []any{"phase", ev.Phase, "gate", ev.Gate, "command", ev.Command}
	case record.NoGates:
		return info, "no gates: the agent's done signal decides", []any{"phase", ev.Phase}
	case record.Gate:
		switch {
		case ev.Unchecked:
			return warn, "gate unchecked: no command, not run", []any{"phase", ev.Phase, "gate", ev.Gate, "requirement", ev.Requirement}
		case ev.Passed:
			return info, "gate passed", []any{"phase", ev.Phase, "gate", ev.Gate, "took", took(ev.DurationMs)}
		}
		return warn, "gate failed", []any{"phase", ev.Phase, "gate", ev.Gate, "problem", public.Words(ev.ProblemPublic, ev.Problem)}
	case record.UsageLimit:
		name := failure.LimitName(ev.Limit)
		if ev.Waiting {
			return warn, fmt.Sprintf("%s limit reached; resets %s; waiting — Ctrl-C stops, `debussy run …` resumes", name,
				failure.ResetClock(ev.Resets, f.At)), []any{"phase", ev.Phase}
		}
		return warn, fmt.Sprintf("%s limit reached; resets %s; not waiting (usage_limit_wait %s)", name,
			failure.ResetClock(ev.Resets, f.At), ev.Wait), []any{"phase", ev.Phase}
	case record.UsageLimitReset:
		return info, fmt.Sprintf("%s limit reset: going on", failure.LimitName(ev.Limit)), []any{"phase", ev.Phase}
	case record.FallbackModel:
		return warn, fmt.Sprintf("%s limit reached: going on with fallback_model %s", failure.LimitName(ev.Limit), ev.To),
			[]any{"phase", ev.Phase, "from", ev.From, "resets", failure.ResetClock(ev.Resets, f.At)}
	case record.Worktree:
		return info, "phase worktree", []any{"phase", ev.Phase, "branch", ev.Branch, "path", l.rel(ev.Path), "resumed", ev.Resumed}
	case record.WorktreeSetupStarted:
		return info, "worktree_setup running", []any{"phase", ev.Phase, "command", ev.Command, "log", l.rel(ev.Log)}
	case record.WorktreeSetup:
		if ev.ExitCode == 0 && !ev.TimedOut {
			return info, "worktree_setup done", []any{"phase", ev.Phase, "took", took(&ev.DurationMs)}
		}
	case record.IncludesCopied:
		return info, "copied ignored files into the phase's worktree (" + worktree.IncludeFile + ")", []any{"phase", ev.Phase, "files", ev.Files}
	case record.Merge:
		return info, "merged into your branch", []any{"phase", ev.Phase, "commit", short(ev.Commit), "files", ev.Files}
	case record.MergeFailed:
		return errL, "phase not merged", []any{"phase", ev.Phase, "branch", ev.Branch, "err", errOf(ev.Err, ev.Error)}
	case record.AfterFailure:
		running := strings.Join(ev.Running, ", ")
		if ev.FailFast {
			return warn, "a phase failed: --fail-fast stops the phases still running at a safe point", []any{"failed", ev.Phase, "running", running}
		}
		return warn, "a phase failed: the phases still running go on to their end (--fail-fast would stop them)",
			[]any{"failed", ev.Phase, "running", running}
	case record.Warning:
		var args []any
		if ev.Phase != "" {
			args = append(args, "phase", ev.Phase)
		}
		if ev.Error != "" {
			args = append(args, "err", errOf(ev.Err, ev.Error))
		}
		return warn, ev.What, args
	}
	return info, "", nil
}

// phaseEnded is a phase's end as the log says it.
func phaseEnded(ev record.PhaseEnded, run *state.Run) (slog.Level, string, []any) {
	rec := run.Phase(ev.Phase)
	if rec == nil {
		rec = &state.PhaseRecord{}
	}
	switch {
	case ev.NotStarted:
		return errL, "phase ended before its first session", []any{"phase", ev.Phase, "status", ev.Status, "err", errOf(ev.Err, ev.Error)}
	case ev.Status == string(state.StatusCompleted):
		return info, "phase completed", []any{"phase", ev.Phase, "sessions", rec.Sessions, "restarts", rec.Restarts}
	case ev.Status == string(state.StatusInterrupted) && !rec.WaitingUntil.IsZero() && ev.Error != "" && ev.Reason == "usage limit reached":
		return warn, ev.Error, []any{"resets", rec.WaitingUntil.Format(time.RFC3339)} // debussy's words: the message
	case ev.Status == string(state.StatusInterrupted):
		return warn, "phase interrupted: work committed, state saved — run the same command again to resume", []any{"phase", ev.Phase}
	}
	return errL, "phase ended", []any{"phase", ev.Phase, "status", ev.Status, "err", errOf(ev.Err, ev.Error)}
}

// errOf is a fact's error as the log shows it: the error itself, whose
// public form a log of structure only shows (public.Handler), else its
// text (an error read back from a record: withheld there).
func errOf(err error, text string) any {
	if err != nil {
		return err
	}
	return errors.New(text)
}

func took(ms *int64) time.Duration {
	if ms == nil {
		return 0
	}
	return (time.Duration(*ms) * time.Millisecond).Round(time.Millisecond)
}

func short(hash string) string { return hash[:min(len(hash), 7)] }

// rel is path relative to the repository root, with slashes.
func (l *Logger) rel(path string) string {
	if l.root == "" {
		return path
	}
	rel, err := filepath.Rel(l.root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

// EventsLog is the subscriber that writes each fact but the volatile ones
// to the run's events.jsonl (state.EventLog redacts each line).
type EventsLog struct {
	Events *state.EventLog
	Log    *slog.Logger // where a failed write is told
}

// Fact writes f.
func (e EventsLog) Fact(f Fact, _ *state.Run) {
	if _, volatile := f.Event.(record.Volatile); volatile || e.Events == nil {
		return
	}
	if err := e.Events.RecordAt(f.At, f.Event); err != nil && e.Log != nil {
		e.Log.Warn("write events log", "err", err)
	}
}

// Close closes the events log.
func (e EventsLog) Close() error {
	if e.Events == nil {
		return nil
	}
	return e.Events.Close()
}
