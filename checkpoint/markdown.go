package checkpoint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/internal/text"
)

// Markdown bounds: the checkpoint heads a prompt and must stay a small part
// of a fresh context however long the phase ran (≈ 30 KB at most).
const (
	mdFiles     = 40
	mdTasks     = 50
	mdProgress  = 15
	mdCalls     = 15
	mdFailed    = 5
	mdTouched   = 20
	mdLineRunes = 200
	// A little above the recorder's bounds, so recorded text is not cut
	// twice; these catch hand-built or decoded checkpoints.
	mdErrorRunes   = errorRunes + 200
	mdMessageRunes = messageRunes + 200
	mdHandoffRunes = handoffRunes + 200
	mdAvoid        = 10
	mdMissing      = 10
)

// Markdown renders the checkpoint for the next session. It is
// deterministic, so it can be golden-tested and diffed between restarts.
func (c Checkpoint) Markdown() string {
	c = c.redacted() // Build did; a decoded or hand-built one may not have
	var b strings.Builder
	c.writeHeader(&b)
	c.writeWhy(&b)
	c.writeHandoff(&b)
	c.writeFiles(&b)
	c.writeTasks(&b)
	c.writeProgress(&b)
	c.writeCalls(&b)
	c.writeAvoid(&b)
	c.writeMessage(&b)
	c.writeCost(&b)
	c.writeHowTo(&b)
	return b.String()
}

func (c Checkpoint) writeHeader(b *strings.Builder) {
	phase := "phase " + c.PhaseID
	if c.PhaseTitle != "" {
		phase += ": " + text.OneLine(c.PhaseTitle, 0)
	}
	var when string
	switch c.Kind {
	case KindResume:
		when = "resumed"
	case KindRetry:
		when = "retry"
	default:
		when = "restart " + strconv.Itoa(c.Restart)
		if c.RestartsOf > 0 {
			when += " of " + strconv.Itoa(c.RestartsOf)
		}
	}
	fmt.Fprintf(b, "# Checkpoint — %s (%s)\n\n", phase, when)

	fmt.Fprintf(b, "You are continuing %s", phase)
	if c.PhaseFile != "" {
		fmt.Fprintf(b, " (%s)", code(c.PhaseFile))
	}
	if c.RunID != "" {
		fmt.Fprintf(b, " of debussy run %s", code(c.RunID))
	}
	b.WriteString(". An earlier session worked on this phase and has ended; you start with an empty context. " +
		"debussy wrote this note from that session's log and from git. The phase's instructions follow after " +
		"the line at the end.\n")
}

func (c Checkpoint) writeWhy(b *strings.Builder) {
	reason := strings.TrimSuffix(text.OneLine(c.Reason, 0), ".")
	switch c.Kind {
	case KindResume:
		b.WriteString("\n## Why we resumed\n\n")
		b.WriteString("debussy was stopped before this phase finished and is picking it up again")
		if reason != "" {
			b.WriteString(" (" + reason + ")")
		}
		b.WriteString(".")
	case KindRetry:
		b.WriteString("\n## Why we retried\n\n")
		b.WriteString("The previous attempt ended without completing the phase")
		if reason != "" {
			b.WriteString(": " + reason)
		}
		b.WriteString(".")
	default:
		b.WriteString("\n## Why we restarted\n\n")
		if reason != "" {
			b.WriteString(capitalize(reason) + ". ")
		}
		b.WriteString("debussy stopped the session between tool calls so that its work could be saved and a " +
			"fresh session could go on.")
	}
	if c.Commit != "" {
		fmt.Fprintf(b, " The work so far is committed as %s.", code(shortHash(c.Commit)))
	}
	b.WriteString("\n")
}

// writeHandoff puts the agent's own account first: it alone knows what
// was half-done. debussy's facts follow, and win where they disagree.
func (c Checkpoint) writeHandoff(b *strings.Builder) {
	handoff := strings.TrimSpace(c.Handoff)
	if handoff == "" && c.NoHandoff == "" {
		return
	}
	b.WriteString("\n## The agent's handoff\n\n")
	if handoff == "" {
		fmt.Fprintf(b, "There is none: %s. What follows comes from git and the session's log only.\n",
			strings.TrimSuffix(text.OneLine(c.NoHandoff, 0), "."))
		return
	}
	b.WriteString("The previous session wrote this as its handoff") // asked for, or at a task boundary (`debussy handoff`)
	if c.HandoffPath != "" {
		fmt.Fprintf(b, " (%s)", code(c.HandoffPath))
	}
	b.WriteString(". It is the agent's own account; the sections after it are debussy's, from git and the session's " +
		"log, and win where the two disagree.\n\n")
	b.WriteString(fence(clipMiddle(handoff, mdHandoffRunes)))
	missing := c.HandoffMissing
	if len(missing) == 0 {
		return
	}
	b.WriteString("\n")
	for i, p := range missing {
		if i == mdMissing {
			fmt.Fprintf(b, "- … and %d more files the handoff names do not exist.\n", len(missing)-mdMissing)
			break
		}
		fmt.Fprintf(b, "- The handoff names %s, which does not exist: it is neither among the files changed nor in the "+
			"work tree. Check before you rely on it.\n", code(clip(p, mdLineRunes)))
	}
}

func (c Checkpoint) writeFiles(b *strings.Builder) {
	b.WriteString("\n## Files changed since the phase began\n\n")
	if len(c.Files) == 0 {
		b.WriteString("None yet, according to git.\n")
	}
	for i, f := range c.Files {
		if i == mdFiles {
			fmt.Fprintf(b, "- … and %d more\n", len(c.Files)-mdFiles)
			break
		}
		fmt.Fprintf(b, "- %s %s\n", f.Status, code(clip(f.Path, mdLineRunes)))
	}
	// Files the stream saw written that git does not list: ignored,
	// reverted, or outside the repository. Worth knowing, not trusting.
	var extra []string
	for _, p := range c.FilesTouched {
		if !inGit(p, c.Files) {
			extra = append(extra, p)
		}
	}
	if len(extra) == 0 {
		return
	}
	b.WriteString("\nAlso written during the session but not in the list above (ignored by git, reverted, or " +
		"outside the repository):\n\n")
	for i, p := range extra {
		if i == mdTouched {
			fmt.Fprintf(b, "- … and %d more\n", len(extra)-mdTouched)
			break
		}
		fmt.Fprintf(b, "- %s\n", code(clip(p, mdLineRunes)))
	}
}

// inGit matches a stream path (usually absolute) against git's relative
// paths by suffix: the checkpoint does not know the repository root.
func inGit(p string, files []FileChange) bool {
	for _, f := range files {
		if p == f.Path || strings.HasSuffix(p, "/"+f.Path) {
			return true
		}
	}
	return false
}

func (c Checkpoint) writeTasks(b *strings.Builder) {
	if len(c.Tasks) == 0 {
		return
	}
	done := 0
	for _, t := range c.Tasks {
		if t.Done {
			done++
		}
	}
	b.WriteString("\n## Tasks\n\n")
	fmt.Fprintf(b, "%d of %d done", done, len(c.Tasks))
	if c.PhaseFile != "" {
		fmt.Fprintf(b, ", per the checkboxes in %s", code(c.PhaseFile))
	}
	b.WriteString(":\n\n")
	for i, t := range c.Tasks {
		if i == mdTasks {
			open := 0
			for _, t := range c.Tasks[mdTasks:] {
				if !t.Done {
					open++
				}
			}
			fmt.Fprintf(b, "- … and %d more (%d open)\n", len(c.Tasks)-mdTasks, open)
			break
		}
		box := "[ ]"
		if t.Done {
			box = "[x]"
		}
		fmt.Fprintf(b, "- %s %s\n", box, clip(text.OneLine(t.Text, 0), mdLineRunes))
	}
}

func (c Checkpoint) writeProgress(b *strings.Builder) {
	if len(c.Progress) == 0 {
		return
	}
	b.WriteString("\n## Progress notes\n\nWhat the agent reported with `debussy progress`, oldest first:\n\n")
	notes := c.Progress
	if len(notes) > mdProgress {
		fmt.Fprintf(b, "- … %d earlier notes\n", len(notes)-mdProgress)
		notes = notes[len(notes)-mdProgress:]
	}
	for _, n := range notes {
		fmt.Fprintf(b, "- %s\n", clip(text.OneLine(n, 0), mdLineRunes))
	}
}

func (c Checkpoint) writeCalls(b *strings.Builder) {
	if len(c.ToolCalls) == 0 {
		return
	}
	b.WriteString("\n## Last tool calls\n\n")
	calls := c.ToolCalls
	if len(calls) > mdCalls {
		calls = calls[len(calls)-mdCalls:]
	}
	fmt.Fprintf(b, "The last %d of %d, oldest first:\n\n", len(calls), max(c.ToolCallCount, len(c.ToolCalls)))
	for _, tc := range calls {
		fmt.Fprintf(b, "- %s", tc.Name)
		if tc.Summary != "" {
			b.WriteString(" " + code(tc.Summary))
		}
		switch {
		case tc.Refused != "":
			b.WriteString(" — refused by debussy (" + tc.Refused + "); it did not run")
		case tc.Interrupted:
			b.WriteString(" — interrupted by the stop; it did not finish")
		case tc.Failed:
			b.WriteString(" — failed")
		}
		b.WriteString("\n")
	}
	if len(c.FailedCommands) == 0 {
		return
	}
	b.WriteString("\n### Failed commands\n")
	failed := c.FailedCommands
	total := max(c.FailedCount, len(failed))
	if len(failed) > mdFailed {
		failed = failed[len(failed)-mdFailed:]
	}
	if total > len(failed) {
		fmt.Fprintf(b, "\nThe last %d of %d failures, oldest first.\n", len(failed), total)
	}
	for _, tc := range failed {
		fmt.Fprintf(b, "\n%s", tc.Name)
		if tc.Summary != "" {
			b.WriteString(" " + code(tc.Summary))
		}
		b.WriteString(" failed")
		if tc.Error == "" {
			b.WriteString(".\n")
			continue
		}
		b.WriteString(":\n\n")
		b.WriteString(fence(clipMiddle(tc.Error, mdErrorRunes)))
	}
}

func (c Checkpoint) writeAvoid(b *strings.Builder) {
	if len(c.Avoid) == 0 {
		return
	}
	b.WriteString("\n## Avoid\n\nThe previous session repeated these calls with the same arguments, without getting " +
		"further, and was restarted because of it. Do not repeat them: find out why they did not work and take " +
		"another approach.\n\n")
	avoid := c.Avoid
	if len(avoid) > mdAvoid {
		fmt.Fprintf(b, "- … %d earlier calls\n", len(avoid)-mdAvoid)
		avoid = avoid[len(avoid)-mdAvoid:]
	}
	for _, a := range avoid {
		fmt.Fprintf(b, "- %s\n", code(clip(a, mdLineRunes)))
	}
}

func (c Checkpoint) writeMessage(b *strings.Builder) {
	msg := strings.TrimSpace(c.LastMessage)
	if msg == "" {
		return
	}
	b.WriteString("\n## The agent's last message\n\n")
	for _, line := range strings.Split(clipMiddle(msg, mdMessageRunes), "\n") {
		line = strings.TrimRight(line, " \t\r")
		if line == "" {
			b.WriteString(">\n")
			continue
		}
		b.WriteString("> " + line + "\n")
	}
}

func (c Checkpoint) writeCost(b *strings.Builder) {
	if c.TokensSoFar <= 0 && c.CostSoFar <= 0 {
		return
	}
	b.WriteString("\n## Tokens and cost\n\nSo far in this phase:")
	if c.TokensSoFar > 0 {
		fmt.Fprintf(b, " %s tokens", estimator.FormatTokens(c.TokensSoFar))
	}
	if c.TokensSoFar > 0 && c.CostSoFar > 0 {
		b.WriteString(",")
	}
	if c.CostSoFar > 0 {
		fmt.Fprintf(b, " $%.2f", c.CostSoFar)
	}
	b.WriteString(".\n")
}

func (c Checkpoint) writeHowTo(b *strings.Builder) {
	b.WriteString("\n## How to continue\n\n")
	b.WriteString("- Continue from here: pick up where the previous session stopped and finish the phase as " +
		"its instructions below say.\n")
	b.WriteString("- Don't redo finished work: the files listed above are already changed and ticked tasks are " +
		"done. Check with `git status`, `git log` and `git diff` rather than starting over.\n")
	b.WriteString("- Re-read files as needed: you have none of the previous session's context, so read a file " +
		"before you edit it.\n")
	if strings.TrimSpace(c.Handoff) != "" {
		b.WriteString("- Start from the handoff's resume instructions, checking its claims against git as you go.\n")
	}
	if len(c.Avoid) > 0 {
		b.WriteString("- Do not repeat the calls listed under Avoid.\n")
	}
	if c.hasInterrupted() {
		b.WriteString("- A tool call above was interrupted by the stop: run it again if you still need its result.\n")
	}
	if len(c.FailedCommands) > 0 {
		b.WriteString("- Find out why a failed command failed before you run it again.\n")
	}
}

func (c Checkpoint) hasInterrupted() bool {
	for _, tc := range c.ToolCalls {
		if tc.Interrupted {
			return true
		}
	}
	return false
}

// code renders s as an inline code span that survives backticks inside.
func code(s string) string {
	s = text.OneLine(s, 0)
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return ticks + " " + s + " " + ticks
	}
	return ticks + s + ticks
}

// fence renders s as a fenced block that its own content cannot close.
func fence(s string) string {
	ticks := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return ticks + "\n" + strings.TrimRight(s, "\n") + "\n" + ticks + "\n"
}

func longestRun(s string, ch rune) int {
	best, n := 0, 0
	for _, r := range s {
		if r == ch {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

func shortHash(h string) string {
	if len(h) == 40 && strings.Trim(h, "0123456789abcdef") == "" {
		return h[:12]
	}
	return h
}
