package orchestrator

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/prompt"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/secrets"
	"github.com/debussy-dev/debussy/state"
)

// checkpoint builds, saves and returns the checkpoint for the next session.
// Its error is the ledger's: a checkpoint file that cannot be written is
// only a warning, since the next prompt carries the checkpoint anyway.
func (p *phaseRun) checkpoint(kind, reason, commit string) (checkpoint.Checkpoint, error) {
	r := p.r
	files, err := p.committer.Changes(p.base)
	if err != nil {
		r.log.Warn("list changed files", "err", err)
	}
	in := checkpoint.Input{
		RunID: r.id, PhaseID: p.ph.ID, PhaseTitle: p.ph.ShortTitle(), PhaseFile: phaseFile(r.root(), p.ph),
		Restart: p.restarts, RestartsOf: r.limits.Restarts, Reason: reason, Commit: commit,
		TokensSoFar: p.rec.PhaseTokens(), CostSoFar: p.rec.PhaseCostUSD(), Kind: kind,
		Refused: p.refused,
	}
	for _, f := range files {
		in.Files = append(in.Files, checkpoint.FileChange{Status: f.Status, Path: f.Path})
	}
	if tasks, err := plans.ReadTasks(p.ph.Path); err == nil {
		for _, t := range tasks {
			in.Tasks = append(in.Tasks, checkpoint.Task{Text: t.Text, Done: t.Done, Line: t.Line})
		}
	} else {
		r.log.Warn("read tasks", "err", err)
	}
	for _, runID := range p.progressRuns {
		prog, err := r.Store.ReadProgress(runID, p.ph.ID)
		if err != nil {
			r.log.Warn("read progress notes", "err", err)
		}
		for _, pr := range prog {
			in.Progress = append(in.Progress, pr.Message)
		}
	}
	handoff := ""
	if p.handoff != "" {
		handoff = readHandoff(p.handoff)
		redactFile(p.handoff)
	}
	setHandoff(&in, handoff, p.handoff, p.noHandoff, p.avoid, p.dir)
	p.handoff, p.noHandoff = "", ""
	cp := checkpoint.Build(in, p.events)
	p.checkpoints++
	dir := r.Store.PhaseDir(r.id, p.ph.ID)
	base := filepath.Join(dir, fmt.Sprintf("checkpoint-%d", p.checkpoints))
	if werr := p.committer.WriteCheckpoint(base, cp); werr != nil {
		r.log.Warn("checkpoint file not saved; the next prompt carries it anyway", "phase", p.ph.ID, "err", werr)
	}
	p.rec.Checkpoint = base + ".json"
	if err := r.recorder.savePhase(p.rec); err != nil {
		return cp, err
	}
	r.recorder.event(record.Checkpoint{Phase: p.ph.ID, Path: base + ".md", Kind: kind, Files: len(in.Files)})
	return cp, nil
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

// withRejection puts the last hook rejection, if any, before base, so the
// session that follows a refused checkpoint commit hears about it.
func (p *phaseRun) withRejection(base string) string {
	return prompt.WithRejection(p.rejected, base)
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

// root is the user's repository root ("" without a repository): phase
// files' paths in prompts are relative to it.
func (r *orun) root() string {
	if r.Repo == nil {
		return ""
	}
	return r.Repo.Root()
}
