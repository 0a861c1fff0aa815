package history

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// RunFilter picks the runs Runs reads.
type RunFilter struct {
	IDs  []string // these runs only; empty: every run
	Plan string   // runs of this master plan only (its path as recorded); "": any
}

// Runs reads the runs recorded in dir (a repository's .debussy): a stream
// per phase of each run, in the order the runs started and, within one,
// the phases started. A run named in f.IDs that is not there is skipped
// and named.
func Runs(dir string, f RunFilter) Result {
	res := Result{SessionIDs: map[string]bool{}}
	store := state.New(dir)
	entries, err := os.ReadDir(filepath.Join(dir, "runs"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		res.Skipped = append(res.Skipped, fmt.Sprintf("%s: %v", filepath.Join(dir, "runs"), err))
		return res
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && (len(f.IDs) == 0 || slices.Contains(f.IDs, e.Name())) {
			ids = append(ids, e.Name())
		}
	}
	for _, id := range f.IDs {
		if !slices.Contains(ids, id) {
			res.Skipped = append(res.Skipped, fmt.Sprintf("run %s: not in %s", id, filepath.Join(dir, "runs")))
		}
	}
	var runs [][]Stream
	for _, id := range ids {
		streams, ok := readRun(store, id, f.Plan, &res)
		if ok && len(streams) > 0 {
			runs = append(runs, streams)
		}
	}
	// Run ids sort by the minute only: the recorded start orders them.
	slices.SortStableFunc(runs, func(a, b []Stream) int {
		return cmp.Or(a[0].Started.Compare(b[0].Started), strings.Compare(a[0].Run, b[0].Run))
	})
	for _, r := range runs {
		res.Streams = append(res.Streams, r...)
	}
	return res
}

// runPhase is one phase of a run while its events are read.
type runPhase struct {
	stream   Stream
	sessions map[int]*Session
	order    []int
	facts    map[int]*sessionFacts
}

// sessionFacts are what events.jsonl says happened at which turn of one
// session (turns as the estimator counts them, from 1).
type sessionFacts struct {
	refused     map[string]bool // tool_use ids refused for the handoff
	askedAt     int             // handoff_requested: the crossing
	triggerAt   int             // trigger or stop_decided, whichever came first
	doneAt      int
	handedOffAt int
	adaptiveAt  int
}

// readRun reads one run's events and sessions; false when the run is
// skipped (unreadable, or of another plan).
func readRun(store *state.Store, id, plan string, res *Result) ([]Stream, bool) {
	path := store.EventsPath(id)
	lines, bad, err := readEvents(path)
	if err != nil {
		res.Skipped = append(res.Skipped, fmt.Sprintf("%s: %v", path, err))
		return nil, false
	}
	if bad > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%s: %d unreadable lines skipped", path, bad))
	}
	var base Stream // what run_started says
	var window int64
	phases := map[string]*runPhase{}
	var order []string
	phaseOf := func(id string) *runPhase {
		p, ok := phases[id]
		if !ok {
			p = &runPhase{sessions: map[int]*Session{}, facts: map[int]*sessionFacts{}}
			phases[id] = p
			order = append(order, id)
		}
		return p
	}
	last := func(p *runPhase) *Session {
		if len(p.order) == 0 {
			return nil
		}
		return p.sessions[p.order[len(p.order)-1]]
	}
	for _, l := range lines {
		if ev, ok := record.As[record.RunStarted](l); ok {
			if plan != "" && !samePath(ev.Plan, plan) {
				return nil, false
			}
			base.Started, base.Threshold, base.MaxTokens, base.Settings = l.TS, ev.ContextThreshold, ev.ContextMaxTokens, ev.Settings
			if ev.Settings != nil {
				base.Model = ev.Settings.Model
			}
			window = int64(ev.ContextWindow)
			continue
		}
		if l.Phase == "" {
			continue
		}
		p := phaseOf(l.Phase)
		if l.Session != nil {
			n := *l.Session
			if _, ok := p.sessions[n]; !ok {
				p.sessions[n] = &Session{N: n, TriggerTurn: -1}
				p.facts[n] = &sessionFacts{refused: map[string]bool{}}
				p.order = append(p.order, n)
			}
			sessionEvent(l, p.sessions[n], p.facts[n], &p.stream)
			continue
		}
		s := last(p)
		if s == nil {
			continue
		}
		switch l.Event {
		case "checkpoint":
			if ev, ok := record.As[record.Checkpoint](l); ok {
				s.End = EndRetry
				if ev.Kind == "restart" {
					s.End = EndRestart
				}
			}
		case "remediation":
			s.End = EndAttempt
		case "gate":
			if ev, ok := record.As[record.Gate](l); ok && ev.ExitCode != nil {
				s.GatesRun++
				if *ev.ExitCode != 0 || (ev.TimedOut != nil && *ev.TimedOut) {
					s.GatesFailed++
				}
			}
		}
	}
	var out []Stream
	for _, phase := range order {
		p := phases[phase]
		st := p.stream
		st.Source, st.Run, st.Phase, st.Started = SourceRun, id, phase, base.Started
		st.Threshold, st.MaxTokens, st.Settings = base.Threshold, base.MaxTokens, base.Settings
		st.Model = cmp.Or(st.Model, base.Model)
		if window > 0 {
			st.Window, st.WindowFrom = window, "config"
		}
		slices.Sort(p.order)
		for _, n := range p.order {
			s := p.sessions[n]
			logPath := filepath.Join(store.PhaseDir(id, phase), fmt.Sprintf("session-%d.jsonl", n))
			lg, err := readSessionLog(logPath)
			if err != nil {
				res.Skipped = append(res.Skipped, fmt.Sprintf("%s: %v", logPath, err))
				if len(st.Sessions) > 0 {
					// The stream cannot be joined across a session it
					// lacks: what follows starts afresh.
					st.Sessions[len(st.Sessions)-1].End = EndRetry
				}
				continue
			}
			if lg.bad > 0 {
				res.Notes = append(res.Notes, fmt.Sprintf("%s: %d unreadable lines skipped", logPath, lg.bad))
			}
			if lg.sessionID != "" {
				res.SessionIDs[lg.sessionID] = true
			}
			s.Turns, s.Side = lg.turns, lg.side
			if s.CostUSD == 0 {
				s.CostUSD = lg.cost
			}
			st.Model = cmp.Or(st.Model, lg.model)
			st.Version = cmp.Or(lg.version, st.Version)
			if st.WindowFrom != "config" && lg.window > 0 && (st.WindowFrom != "cli" || lg.windowFrom == "cli") {
				st.Window, st.WindowFrom = lg.window, lg.windowFrom
			}
			markTurns(s, p.facts[n], lg.at)
			if len(s.Turns) == 0 {
				continue
			}
			st.Sessions = append(st.Sessions, *s)
		}
		if len(st.Sessions) == 0 {
			continue
		}
		if st.Window == 0 {
			st.Window, st.WindowFrom = guessWindow(st.Model, st.Sessions)
		}
		out = append(out, st)
	}
	return out, true
}

// sessionEvent folds one event stamped with a session into it.
func sessionEvent(l record.Line, s *Session, f *sessionFacts, st *Stream) {
	pe, perr := l.Policy() // decoded once: the policy's fields and the turn
	turn := func() int {
		if perr == nil && pe.Turn != nil {
			return *pe.Turn
		}
		return 0
	}
	switch l.Event {
	case string(record.Trigger), string(record.StopDecided):
		if perr != nil {
			return
		}
		if f.triggerAt == 0 {
			f.triggerAt = turn()
		}
		if s.Trigger == "" && pe.Trigger != nil {
			s.Trigger = *pe.Trigger
		}
		if pe.Trigger != nil && *pe.Trigger == "adaptive" && f.adaptiveAt == 0 {
			f.adaptiveAt = turn()
		}
	case string(record.HandoffRequested):
		if f.askedAt == 0 {
			f.askedAt = turn()
		}
	case string(record.ToolDenied):
		if perr == nil && pe.Why == "handoff" && pe.ToolUseID != nil {
			f.refused[*pe.ToolUseID] = true
		}
	case string(record.DoneSignal):
		if f.doneAt == 0 {
			f.doneAt = turn()
		}
	case string(record.AgentHandoff):
		s.AgentHandoff = true
		if f.handedOffAt == 0 {
			f.handedOffAt = turn()
		}
	case string(record.ContextWarning):
		s.Warned = true
	case "context_breakdown", "context_window":
		var cu record.ContextUsage
		if l.Decode(&cu) == nil && cu.Window > 0 {
			st.Window, st.WindowFrom = cu.Window, "cli"
			st.Model = cmp.Or(cu.Model, st.Model)
		}
	case "session_ended":
		if ev, ok := record.As[record.SessionEnded](l); ok {
			s.CostUSD = ev.CostUSD
			if ev.Trigger != "" {
				s.Trigger = ev.Trigger
			}
		}
	}
}

// markTurns puts the session's recorded facts on its turns: the crossing,
// the calls refused, the handoff's turns, the agent's signals.
func markTurns(s *Session, f *sessionFacts, msgs []int) {
	// index is the turn an event's number names: the estimator's count of
	// messages, which synthetic replies are part of.
	index := func(turn int) int {
		if turn >= 1 && turn <= len(msgs) {
			return msgs[turn-1]
		}
		return min(turn, len(s.Turns)) - 1
	}
	at := func(turn int) *Turn {
		if i := index(turn); i >= 0 && i < len(s.Turns) {
			return &s.Turns[i]
		}
		return nil
	}
	asked := 0 // the crossing turn's index + 1
	if f.askedAt > 0 {
		asked = index(f.askedAt) + 1
	}
	for i := range s.Turns {
		t := &s.Turns[i]
		refused := len(t.Calls) > 0
		for _, c := range t.Calls {
			refused = refused && f.refused[c.ID]
		}
		t.Refused = refused
		// After the handoff was asked for, what the agent does is the
		// handoff, not the phase's work.
		t.Handoff = asked > 0 && i >= asked
	}
	if t := at(f.doneAt); t != nil {
		t.Done = true
	}
	if t := at(f.handedOffAt); t != nil {
		t.HandedOff = true
	}
	if t := at(f.adaptiveAt); t != nil {
		t.Adaptive = true
	}
	switch {
	case asked > 0:
		s.TriggerTurn = asked - 1
	case f.triggerAt > 0:
		s.TriggerTurn = index(f.triggerAt)
	}
}

// samePath reports whether a and b name one file: the same path, or
// (through a link, another spelling) the same file on disk.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

// readEvents reads an events.jsonl, skipping lines that do not parse
// (counted in bad).
func readEvents(path string) (lines []record.Line, bad int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	rd := bufio.NewReader(f)
	for {
		line, rerr := rd.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			l, perr := record.Parse(line)
			if perr != nil {
				bad++
			} else {
				lines = append(lines, l)
			}
		}
		if errors.Is(rerr, io.EOF) {
			return lines, bad, nil
		}
		if rerr != nil {
			return lines, bad, rerr
		}
	}
}
