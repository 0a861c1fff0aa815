package commands

import (
	"fmt"
	"strings"

	"github.com/debussy-dev/debussy/claudeconf"
)

// hookFindings lists what the user's Claude Code configuration adds to
// debussy's sessions on debussy's own hook events: settings files' hooks
// and enabled plugins (with their hooks). claude runs them beside
// debussy's, so each is a warning that says what it may change; a plugin
// with none on those events is listed as ok.
func hookFindings(c claudeconf.Found) []finding {
	var fs []finding
	for _, h := range c.Hooks {
		fs = append(fs, finding{"warn", "hooks", hookText(h.Source, h), hookFix})
	}
	for _, p := range c.Plugins {
		where := "enabled in " + p.EnabledIn
		if p.Path == "" {
			fs = append(fs, finding{"warn", "plugins", fmt.Sprintf("plugin %s (%s): not found in claude's installed plugins, its hooks unknown", p.ID, where),
				"claude plugin list shows it; claude plugin disable " + p.ID + " if a run should go without it"})
			continue
		}
		if len(p.Hooks) == 0 {
			fs = append(fs, finding{"ok", "plugins", fmt.Sprintf("plugin %s (%s): no hooks on debussy's events (%s)", p.ID, where, strings.Join(claudeconf.Events, ", ")), ""})
			continue
		}
		for _, h := range p.Hooks {
			fs = append(fs, finding{"warn", "plugins", hookText(h.Source+" ("+where+")", h), "claude plugin disable " + p.ID + " if a run should go without it"})
		}
	}
	for _, pr := range c.Problems {
		fs = append(fs, finding{"warn", "hooks", pr + ": what it adds to a session is unknown", "fix the file: claude reads it too"})
	}
	return fs
}

const hookFix = "remove it from that file if debussy's runs should go without it (claude runs it in every session)"

// hookText says one hook and what it may change for debussy.
func hookText(source string, h claudeconf.Hook) string {
	on := h.Event
	if h.Matcher != "" && h.Matcher != "*" {
		on += " " + h.Matcher
	}
	cmd := h.Command
	if len(cmd) > 60 {
		cmd = cmd[:57] + "..."
	}
	return fmt.Sprintf("%s hook %q in %s: %s", on, cmd, source, claudeconf.Effect(h.Event))
}
