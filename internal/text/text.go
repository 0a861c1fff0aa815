// Package text holds the few string foldings every writer of messages,
// prompts and events uses, so that they fold alike.
package text

import "strings"

// OneLine folds every run of whitespace in s to one space; with max > 0 it
// cuts the result to max runes, the last an ellipsis.
func OneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if max <= 0 {
		return s
	}
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// LastLines is the last n lines of s, without its trailing newlines.
func LastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// LastLine is the last non-empty line of s: where a program says why it
// stopped.
func LastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n\t "), "\n")
	return lines[len(lines)-1]
}

// Tail is the last n bytes of s, marked as cut when longer.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// ShellQuote is s as one POSIX shell word: in single quotes, each quote
// inside closed, escaped and opened again.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
