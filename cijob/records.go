package cijob

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/debussy-dev/debussy/outcome"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/recorder"
	"github.com/debussy-dev/debussy/remote"
	"github.com/debussy-dev/debussy/secrets"
	"github.com/debussy-dev/debussy/state"
)

// RecordFiles name what a pushed record holds: the run's record and the
// phase's facts (and the run's), each as it may leave the machine
// (outcome.PublicRun, outcome.PublicEvent) — never a session's transcript.
const (
	RecordRunFile    = "run.json"
	RecordEventsFile = "events.jsonl"
)

// recordPushWait bounds one push of the record: a remote that hangs costs
// the record, never the run.
var recordPushWait = 2 * time.Minute

// RecordPusher pushes the run's record beside each phase's branch
// (--push): for every phase the run works on, a commit on
// remote.RecordRef(plan, phase, run). It pushes after each push of the
// phase's branch and at the phase's end, on a goroutine of its own, and
// once more when the run's record closes. It is a subscriber of the run's
// record (recorder.Subscriber).
type RecordPusher struct {
	job *Job

	mu     sync.Mutex
	run    []byte              // the run's record as last told, public
	lines  map[string][][]byte // the public facts by phase ("" the run's own)
	phases []string            // the phases the run worked on
	dirty  map[string]bool     // phases whose record is to push
	wake   chan struct{}
	done   chan struct{}
	closed bool
}

// RecordPusher is the run's record pusher; nil without --push.
func (j *Job) RecordPusher() *RecordPusher {
	if j.Push == "" {
		return nil
	}
	p := &RecordPusher{job: j, lines: map[string][][]byte{}, dirty: map[string]bool{}, wake: make(chan struct{}, 1),
		done: make(chan struct{})}
	go p.loop()
	return p
}

// Fact keeps f as it may leave the machine, and after a push of a phase's
// branch, a phase's end or the run's, asks for the record's push.
func (p *RecordPusher) Fact(f recorder.Fact, run *state.Run) {
	phase := recorder.PhaseOf(f.Event)
	ev, public := outcome.PublicEvent(f.Event)
	var line []byte
	if public {
		var err error
		if line, err = state.EncodeEvent(f.At, ev); err != nil {
			public = false
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if public {
		p.lines[phase] = append(p.lines[phase], line)
	}
	switch ev := f.Event.(type) {
	case record.PhaseStarted:
		if !slices.Contains(p.phases, ev.Phase) {
			p.phases = append(p.phases, ev.Phase)
		}
		p.snapshot(run)
	case record.Push:
		p.snapshot(run)
		p.dirty[ev.Phase] = true
	case record.PhaseEnded:
		p.snapshot(run)
		p.dirty[ev.Phase] = true
	case record.RunEnded:
		p.snapshot(run)
		for _, ph := range p.phases {
			p.dirty[ph] = true
		}
	default:
		return
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// snapshot keeps the run's record as it may leave the machine; p.mu held.
func (p *RecordPusher) snapshot(run *state.Run) {
	if js, err := json.MarshalIndent(outcome.PublicRun(run), "", "  "); err == nil {
		p.run = append(secrets.Default().JSON(js), '\n')
	}
}

// Close pushes what is left and waits for it.
func (p *RecordPusher) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	<-p.done
	return nil
}

func (p *RecordPusher) loop() {
	defer close(p.done)
	for range p.wake {
		p.mu.Lock()
		closed := p.closed
		var todo []string
		for ph := range p.dirty {
			todo = append(todo, ph)
		}
		clear(p.dirty)
		files := map[string]map[string][]byte{}
		for _, ph := range todo {
			events := slices.Concat(p.lines[""], p.lines[ph])
			files[ph] = map[string][]byte{RecordRunFile: p.run, RecordEventsFile: joinLines(events)}
		}
		p.mu.Unlock()
		slices.Sort(todo)
		for _, ph := range todo {
			p.push(ph, files[ph])
		}
		if closed {
			return
		}
	}
}

// push pushes phase's record; a failure costs the record only: a warning.
func (p *RecordPusher) push(phase string, files map[string][]byte) {
	j := p.job
	ctx, cancel := j.pushContext()
	defer cancel()
	ctx, stop := context.WithTimeout(ctx, recordPushWait)
	defer stop()
	ref := remote.RecordRef(plans.ID(j.PlanRel), phase, j.Run)
	msg := fmt.Sprintf("debussy record: run %s, phase %s", j.Run, phase)
	if err := j.remoteAt(j.Repo.Root()).PushRecord(ctx, ref, msg, files); err != nil {
		j.Log.Warn("push the run's record: status and report --from will not show it", "phase", phase, "ref", ref, "err", err)
	}
}

func joinLines(lines [][]byte) []byte {
	var out []byte
	for _, l := range lines {
		out = append(out, l...)
	}
	return out
}
