// Package prompt writes what the agent is told: a phase's prompt (which
// phase, its file, how to signal the end), the remediation that starts a
// fresh session after a failed gate or a missing signal, and a commit the
// repository's hook rejected. Text the agent did not write — gate and hook
// output, the agent's own reasons — is redacted before it is quoted.
package prompt

import (
	"fmt"
	"strings"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/plans"
)

// Phase is the prompt of a phase's first session and the tail of every
// later one: which phase, the phase file itself, and exactly how to signal
// the end. file is the phase file's path as the agent, working in the
// repository, can open it.
func Phase(plan *plans.Plan, ph *plans.Phase, file string) string {
	return PhaseIn(plan, ph, file, nil)
}

// Bounds is what the agent is told of the sandbox it works in.
type Bounds struct {
	Write   []string // writable places besides the repository and $TMPDIR, as configured
	Domains []string // hosts its commands may reach; none: no network
}

// PhaseIn is Phase for a run in a sandbox (nil: none): one paragraph
// says what is bounded, so that the agent takes a refusal for the
// boundary, not for a fault to retry or work around.
func PhaseIn(plan *plans.Plan, ph *plans.Phase, file string, bounds *Bounds) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are working on phase %s, %q, of the plan %q.\n", ph.ID, ph.ShortTitle(), plan.Name)
	fmt.Fprintf(&b, "The phase file is %s; its full text is below. Do the phase's tasks in this repository.\n\n", file)
	fmt.Fprintf(&b, "When the phase's work is complete (its tasks done, its gates passing), run exactly:\n\n    debussy done --phase %s\n\n", ph.ID)
	fmt.Fprintf(&b, "then end your turn. If you cannot go on without a person (missing credentials, a decision only they can make), run:\n\n    debussy done --phase %s --status blocked --reason \"<why>\"\n\n", ph.ID)
	fmt.Fprintf(&b, "If the phase cannot be done as written, run:\n\n    debussy done --phase %s --status failed --reason \"<why>\"\n\n", ph.ID)
	fmt.Fprintf(&b, "Record progress as you go; it survives a restart of this session:\n\n    debussy progress --phase %s \"<what is done, what is next>\"\n\n", ph.ID)
	b.WriteString("debussy commits your work itself: do not commit, and do not touch .debussy/.\n")
	if bounds != nil {
		b.WriteString("\n" + bounds.paragraph())
	}
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

// Remediation starts a fresh session after a failed gate or a missing
// signal: the problem with its evidence first (redacted), then base, the
// phase's prompt. attempt counts remediations, of at most maxRetries.
func Remediation(ph *plans.Phase, attempt, maxRetries int, problem, base string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Remediation %d/%d for phase %s\n\n", attempt, maxRetries, ph.ID)
	b.WriteString("An earlier session worked on this phase, and its work is committed in this repository, but the phase is not done yet:\n\n")
	// The problem quotes gate and hook output and the agent's words: a
	// secret in them must not travel into the next prompt.
	b.WriteString(strings.TrimRight(checkpoint.Redact(problem), "\n"))
	fmt.Fprintf(&b, "\n\nFix the cause, check it yourself (run the failing command), then run `debussy done --phase %s`.\n\n---\n\n", ph.ID)
	b.WriteString(base)
	return b.String()
}

// HookEvidence tells the agent why debussy could not commit its work: the
// repository's own hook refused it, with the hook's output (redacted).
func HookEvidence(e *gitcommit.HookError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "debussy's commit of your work was rejected by the repository's %s hook (exit status %d). ", e.Hook, e.ExitCode)
	b.WriteString("Your work is still in the tree, uncommitted. Fix what the hook reports; debussy commits again at the next checkpoint.\n")
	out := text.LastLines(checkpoint.Redact(e.Output), 60)
	if strings.TrimSpace(out) == "" {
		out = "(no output)"
	}
	fmt.Fprintf(&b, "Hook output (last lines):\n```\n%s\n```\n", strings.TrimRight(out, "\n"))
	return b.String()
}

// WithRejection puts the hook's rejection e of the last commit before
// base, so the session that follows a refused checkpoint commit hears
// about it; base alone when e is nil.
func WithRejection(e *gitcommit.HookError, base string) string {
	if e == nil {
		return base
	}
	return "# The last commit was rejected\n\n" + HookEvidence(e) + "\n---\n\n" + base // HookEvidence redacts the hook's output
}

// Answered puts a person's answer to the question a blocked phase asked
// before base (the resumed session's prompt): the agent blocked the phase
// with question, and a person answered it. Both are redacted.
func Answered(phaseID, question, answer, base string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Your question was answered\n\nAn earlier session blocked phase %s, asking:\n\n", phaseID)
	fmt.Fprintf(&b, "> %s\n\n", strings.ReplaceAll(strings.TrimSpace(checkpoint.Redact(question)), "\n", "\n> "))
	b.WriteString("A person answered:\n\n")
	fmt.Fprintf(&b, "> %s\n\n", strings.ReplaceAll(strings.TrimSpace(checkpoint.Redact(answer)), "\n", "\n> "))
	fmt.Fprintf(&b, "Go on with the phase using this answer. If it still cannot be done, block it again with `debussy done --phase %s --status blocked --reason \"<why>\"`.\n\n---\n\n", phaseID)
	b.WriteString(base)
	return b.String()
}

// paragraph says what the sandbox bounds, in one paragraph.
func (bd *Bounds) paragraph() string {
	write := "this repository (your working directory) and $TMPDIR"
	if len(bd.Write) > 0 {
		write = "this repository (your working directory), $TMPDIR and " + strings.Join(bd.Write, ", ")
	}
	net := "Commands (and the gates) have no network"
	if len(bd.Domains) > 0 {
		net = "Commands (and the gates) reach only " + strings.Join(bd.Domains, ", ")
	}
	return fmt.Sprintf("This run is sandboxed, for every tool and for the gates: you can write only in %s; "+
		"everything else is read-only, and credential files (~/.ssh, ~/.aws, …) are hidden. %s. "+
		"A \"Read-only file system\", \"Permission denied\", missing credential or refused connection outside those bounds "+
		"is the sandbox, not a fault: do not retry it or work around it; if the phase cannot be done within them, "+
		"block it (--status blocked, as above).\n", write, net)
}
