package fakeapi

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// Reading what the CLI sent: the user's text, tool results and hook context, whichever CLI version put them where.

// userText flattens a user message: its text blocks with the leading
// <system-reminder> blocks stripped, and its tool_result contents; the
// PostToolUse hook context in either is cut out (Request.HookContext has
// it, from what the request added).
func userText(raw json.RawMessage) (text string, toolResults []string) {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return stripReminders(unwrapStopFeedback(cutHookContext(str))), nil
	}
	var blocks []wireBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return "", nil
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if t := stripReminders(unwrapStopFeedback(cutHookContext(b.Text))); t != "" {
				parts = append(parts, t)
			}
		case "tool_result":
			// 2.1.330 appends its other reminders there too ("<total_tokens>
			// … tokens left"): the tool's own output is what is left.
			rest := reminderRE.ReplaceAllString(cutHookContext(flatten(b.Content)), "")
			toolResults = append(toolResults, strings.TrimRight(rest, "\n"))
		}
	}
	return strings.Join(parts, "\n"), toolResults
}

// hookContextRE is the reminder the CLI wraps a PostToolUse
// additionalContext in ("PostToolUse:Bash hook additional context: TEXT").
var hookContextRE = regexp.MustCompile(`(?s)<system-reminder>\s*PostToolUse:[^\n]*? hook additional context: (.*?)\s*</system-reminder>`)

var reminderRE = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)

// stopFeedbackRE is a Stop hook's block reason as 2.1.331 and 2.1.332 send
// it: in a reminder, after lines saying it is a hook's output (their
// wording differs). 2.1.197 and 2.1.330 send "Stop hook feedback:\nTEXT"
// as plain user text.
var stopFeedbackRE = regexp.MustCompile(`(?s)<system-reminder>[^<]*?(Stop hook feedback:.*?)\s*</system-reminder>`)

// unwrapStopFeedback takes a Stop hook's feedback out of its reminder, so
// that LastUser holds it whichever way the CLI wrapped it.
func unwrapStopFeedback(s string) string {
	return stopFeedbackRE.ReplaceAllString(s, "$1")
}

// cutHookContext returns s without its hook-context reminders.
func cutHookContext(s string) string {
	return hookContextRE.ReplaceAllString(s, "")
}

func flatten(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var blocks []wireBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func stripReminders(s string) string {
	const open, closing = "<system-reminder>", "</system-reminder>"
	s = strings.TrimSpace(s)
	for strings.HasPrefix(s, open) {
		end := strings.Index(s, closing)
		if end < 0 {
			return ""
		}
		s = strings.TrimSpace(s[end+len(closing):])
	}
	return s
}

// texts is every string of a request the model reads, in order: the
// top-level system field, then each message's content whatever its role
// (user, assistant, system), block type, wrapper or nesting. Ids, types,
// names and signatures are not text.
func texts(wr *wireRequest) []string {
	var out []string
	collectTexts(wr.System, &out)
	for _, m := range wr.Messages {
		collectTexts(m.Content, &out)
	}
	return out
}

// notText are the keys whose string values are metadata, not what the
// model reads.
var notText = map[string]bool{"type": true, "id": true, "tool_use_id": true, "name": true,
	"signature": true, "media_type": true, "data": true, "role": true, "cache_control": true}

func collectTexts(raw json.RawMessage, out *[]string) {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if x != "" {
				*out = append(*out, x)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				if !notText[k] {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
}

// added returns the texts of cur that prev (the session's previous
// request) did not carry, counting repeats: what the CLI put in since.
func added(prev, cur []string) []string {
	seen := map[string]int{}
	for _, t := range prev {
		seen[t]++
	}
	var out []string
	for _, t := range cur {
		if seen[t] > 0 {
			seen[t]--
			continue
		}
		out = append(out, t)
	}
	return out
}

// anyHookContextRE is a PostToolUse additionalContext in any wrapper:
// up to the end of its reminder, else of the text.
var anyHookContextRE = regexp.MustCompile(`(?s)PostToolUse:[^\n]*? hook additional context: (.*?)\s*(?:</system-reminder>|\z)`)

// hookContexts is every PostToolUse additionalContext in ts.
func hookContexts(ts []string) []string {
	var ctx []string
	for _, t := range ts {
		for _, m := range anyHookContextRE.FindAllStringSubmatch(t, -1) {
			ctx = append(ctx, m[1])
		}
	}
	return ctx
}

// Carries reports whether a text this request added (see Added) contains
// sub: a hook's answer, a nudge, wherever the CLI put it.
func (r Request) Carries(sub string) bool {
	return slices.ContainsFunc(r.Added, func(t string) bool { return strings.Contains(t, sub) })
}

// sessionDir is the session's working directory: from this request, else
// as an earlier request of the session said. 2.1.330 does not repeat it in
// every request's system prompt. s.mu is held.
func (s *Server) sessionDir(sess int, system json.RawMessage, body []byte) string {
	dir := workingDir(system)
	if dir == "" {
		dir = workingDir(body) // elsewhere in the request, e.g. a reminder
	}
	if dir == "" {
		return s.dirs[sess]
	}
	s.dirs[sess] = dir
	return dir
}

// workingDir finds the session's directory in the CLI's system prompt
// (" - Primary working directory: /path"), or in raw JSON text.
func workingDir(system json.RawMessage) string {
	const key = "Primary working directory: "
	text := string(system)
	var blocks []wireBlock
	if json.Unmarshal(system, &blocks) == nil {
		var b strings.Builder
		for _, bl := range blocks {
			b.WriteString(bl.Text)
			b.WriteByte('\n')
		}
		text = b.String()
	} else {
		_ = json.Unmarshal(system, &text)
	}
	i := strings.Index(text, key)
	if i < 0 {
		return ""
	}
	rest := text[i+len(key):]
	if j := strings.IndexAny(rest, "\n\"\\"); j >= 0 { // a newline, or its JSON escape
		rest = rest[:j]
	}
	return strings.TrimSpace(rest)
}
