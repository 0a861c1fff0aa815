package orchestrator

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/plans"
)

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

// phasePrompt is the prompt of a phase's first session and the tail of
// every later one: which phase, the phase file itself, and exactly how to
// signal the end. root is the repository's, for the phase file's path.
func phasePrompt(plan *plans.Plan, ph *plans.Phase, root string) string {
	file := phaseFile(root, ph)
	var b strings.Builder
	fmt.Fprintf(&b, "You are working on phase %s, %q, of the plan %q.\n", ph.ID, shortTitle(ph), plan.Name)
	fmt.Fprintf(&b, "The phase file is %s; its full text is below. Do the phase's tasks in this repository.\n\n", file)
	fmt.Fprintf(&b, "When the phase's work is complete (its tasks done, its gates passing), run exactly:\n\n    debussy done --phase %s\n\n", ph.ID)
	fmt.Fprintf(&b, "then end your turn. If you cannot go on without a person (missing credentials, a decision only they can make), run:\n\n    debussy done --phase %s --status blocked --reason \"<why>\"\n\n", ph.ID)
	fmt.Fprintf(&b, "If the phase cannot be done as written, run:\n\n    debussy done --phase %s --status failed --reason \"<why>\"\n\n", ph.ID)
	fmt.Fprintf(&b, "Record progress as you go; it survives a restart of this session:\n\n    debussy progress --phase %s \"<what is done, what is next>\"\n\n", ph.ID)
	b.WriteString("debussy commits your work itself: do not commit, and do not touch .debussy/.\n")
	if len(ph.Gates) > 0 {
		b.WriteString("\nAfter you signal completion debussy runs these gates; the phase is done only if all pass:\n")
		for _, g := range ph.Gates {
			if !g.Unchecked {
				fmt.Fprintf(&b, "  - %s: %s\n", g.Name, g.Command)
			}
		}
		// No command checks these: the agent is the only check.
		if names := gate.Unchecked(ph); len(names) > 0 {
			b.WriteString("\nThese requirements have no command debussy can run; you must meet them and check them yourself before you signal completion:\n")
			for _, g := range ph.Gates {
				if g.Unchecked {
					fmt.Fprintf(&b, "  - %s: %s\n", g.Name, g.Requirement)
				}
			}
		}
	}
	for _, n := range ph.ReadNotes {
		fmt.Fprintf(&b, "\nRead the previous phase's notes first: %s\n", n)
	}
	for _, n := range ph.WriteNotes {
		fmt.Fprintf(&b, "\nBefore you signal completion, write your notes for the next phase to: %s\n", n)
	}
	fmt.Fprintf(&b, "\n----- phase file: %s -----\n%s\n----- end of phase file -----\n", file, strings.TrimRight(ph.Content, "\n"))
	return b.String()
}

// remediationPrompt starts a fresh session after a failed gate or a
// missing signal: the problem with its evidence first, then the phase.
func remediationPrompt(ph *plans.Phase, attempt, maxRetries int, problem, basePrompt string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Remediation %d/%d for phase %s\n\n", attempt, maxRetries, ph.ID)
	b.WriteString("An earlier session worked on this phase, and its work is committed in this repository, but the phase is not done yet:\n\n")
	// The problem quotes gate and hook output and the agent's words: a
	// secret in them must not travel into the next prompt.
	b.WriteString(strings.TrimRight(checkpoint.Redact(problem), "\n"))
	fmt.Fprintf(&b, "\n\nFix the cause, check it yourself (run the failing command), then run `debussy done --phase %s`.\n\n---\n\n", ph.ID)
	b.WriteString(basePrompt)
	return b.String()
}

// shortTitle drops the "Phase 2:" prefix phase files usually repeat in
// their heading, so messages read `phase 2 "Endpoints"`.
func shortTitle(ph *plans.Phase) string {
	t := strings.TrimSpace(ph.Title)
	lower := strings.ToLower(t)
	for _, prefix := range []string{"phase " + strings.ToLower(ph.ID), "phase"} {
		if !strings.HasPrefix(lower, prefix) {
			continue
		}
		rest := strings.TrimLeft(t[len(prefix):], " ")
		for _, sep := range []string{":", "—", "–", "-"} {
			if strings.HasPrefix(rest, sep) {
				if s := strings.TrimSpace(rest[len(sep):]); s != "" {
					return s
				}
			}
		}
	}
	return t
}

// hookEvidence tells the agent why debussy could not commit its work: the
// repository's own hook refused it, with the hook's output.
func hookEvidence(e *gitcommit.HookError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "debussy's commit of your work was rejected by the repository's %s hook (exit status %d). ", e.Hook, e.ExitCode)
	b.WriteString("Your work is still in the tree, uncommitted. Fix what the hook reports; debussy commits again at the next checkpoint.\n")
	out := lastLines(checkpoint.Redact(e.Output), 60)
	if strings.TrimSpace(out) == "" {
		out = "(no output)"
	}
	fmt.Fprintf(&b, "Hook output (last lines):\n```\n%s\n```\n", strings.TrimRight(out, "\n"))
	return b.String()
}

// withRejection puts the last hook rejection, if any, before prompt, so
// the session that follows a refused checkpoint commit hears about it.
func (p *phaseRun) withRejection(prompt string) string {
	if p.rejected == nil {
		return prompt
	}
	return "# The last commit was rejected\n\n" + checkpoint.Redact(hookEvidence(p.rejected)) + "\n---\n\n" + prompt
}
