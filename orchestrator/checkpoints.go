package orchestrator

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/secrets"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/state"
)

// checkpoint builds, writes and returns the checkpoint for the next
// session. A checkpoint file that cannot be written is only a warning:
// the next prompt carries the checkpoint anyway.
func (p *phaseRun) checkpoint(kind, reason, commit string) checkpoint.Checkpoint {
	warn := func(what string, err error) {
		p.rec.Emit(record.Warning{Phase: p.ph.ID, What: what, Error: err.Error(), Err: err})
	}
	files, err := p.commits.Changes(p.start.base)
	if err != nil {
		warn("list changed files", err)
	}
	rec := p.rec.Record()
	in := checkpoint.Input{
		RunID: p.files.run, PhaseID: p.ph.ID, PhaseTitle: p.ph.ShortTitle(), PhaseFile: phaseFile(p.start.root, p.ph),
		Restart: p.tries.restarts, RestartsOf: p.limits.Restarts, Reason: reason, Commit: commit,
		TokensSoFar: rec.PhaseTokens(), CostSoFar: rec.PhaseCostUSD(), Kind: kind,
		Refused: p.carry.refused,
	}
	for _, f := range files {
		in.Files = append(in.Files, checkpoint.FileChange{Status: f.Status, Path: f.Path})
	}
	if tasks, err := plans.ReadTasks(p.ph.Path); err == nil {
		for _, t := range tasks {
			in.Tasks = append(in.Tasks, checkpoint.Task{Text: t.Text, Done: t.Done, Line: t.Line})
		}
	} else {
		warn("read tasks", err)
	}
	for _, runID := range p.start.progressRuns {
		prog, err := p.files.store.ReadProgress(runID, p.ph.ID)
		if err != nil {
			warn("read progress notes", err)
		}
		for _, pr := range prog {
			in.Progress = append(in.Progress, pr.Message)
		}
	}
	c := &p.carry
	handoff := ""
	if c.handoff != "" {
		handoff = readHandoff(c.handoff)
		redactFile(c.handoff)
	}
	setHandoff(&in, handoff, c.handoff, c.noHandoff, c.avoid, p.start.dir)
	c.handoff, c.noHandoff = "", ""
	cp := checkpoint.Build(in, c.events)
	c.checkpoints++
	base := filepath.Join(p.files.store.PhaseDir(p.files.run, p.ph.ID), fmt.Sprintf("checkpoint-%d", c.checkpoints))
	if werr := p.commits.WriteCheckpoint(base, cp); werr != nil {
		warn("checkpoint file not saved; the next prompt carries it anyway", werr)
	}
	p.rec.Emit(record.Checkpoint{Phase: p.ph.ID, Path: base + ".md", Kind: kind, Files: len(in.Files)})
	return cp
}

// redactFile rewrites a file the agent left under .debussy/ (its handoff)
// with its secrets redacted, and private (the agent's Write made it
// 0644): debussy keeps it as a record, and nothing debussy keeps may hold
// a secret.
func redactFile(path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	_ = state.WriteFile(path, []byte(secrets.Redact(string(data))))
}

// maxHandoffBytes bounds what is read of a handoff file; the checkpoint
// bounds it again.
const maxHandoffBytes = 64 << 10

// readHandoff is the handoff's content for the checkpoint, bounded.
func readHandoff(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, maxHandoffBytes))
	return string(data)
}

// setHandoff puts the agent's handoff (or why there is none) and the calls
// to avoid into the checkpoint's input; files the handoff names are looked
// up in the work tree at root.
func setHandoff(in *checkpoint.Input, handoff, path, noHandoff string, avoid []string, root string) {
	in.Handoff, in.HandoffPath, in.Avoid = handoff, path, avoid
	if handoff == "" {
		in.NoHandoff = noHandoff
	}
	in.Exists = func(p string) bool {
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		_, err := os.Stat(p)
		return err == nil
	}
}

// keepFrom keeps what the next checkpoint needs of the session that ended:
// the handoff or why there is none, and the calls to avoid.
func (p *phaseRun) keepFrom(end session.Result) {
	p.carry.handoff, p.carry.noHandoff = end.Handoff, end.NoHandoff
	p.carry.avoid = append(p.carry.avoid, end.Avoid...)
}

// phaseFile is the phase file's path relative to the repository root at
// root — what the agent, working there, can open; ph.File is relative to
// the master plan ("phase-1.md" for docs/plans/phase-1.md). Outside the
// repository it stays as the plan wrote it.
func phaseFile(root string, ph *plans.Phase) string {
	if root == "" || ph.Path == "" {
		return filepath.ToSlash(ph.File)
	}
	rel := PlanRel(root, ph.Path)
	if rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return filepath.ToSlash(ph.File)
	}
	return rel
}
