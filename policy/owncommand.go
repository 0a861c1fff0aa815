package policy

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ownSubcommands are the debussy commands the agent is told to run: they
// only write debussy's own state, so no permission mode may refuse them
// (acceptEdits lets through only the few Bash commands it judges harmless,
// such as ls, and refuses `debussy done` with the rest; a phase whose
// `debussy done` is refused looks like an agent that never finished).
var ownSubcommands = map[string]bool{"done": true, "progress": true, "handoff": true}

// OwnCommand reports whether a Bash command line is exactly one of
// debussy's own commands (`debussy done --phase 2`, `/path/to/debussy
// progress "…"`): a single simple command, every word a literal (quoted
// or not), no redirection, pipe, list, substitution or assignment. A
// shell parser decides, not a pattern: `debussy done; rm -rf x` or
// `debussy done $(curl …)` is not debussy's command, whatever its prefix.
func OwnCommand(cmd string) bool {
	if !strings.Contains(cmd, "debussy") {
		return false // every Bash call asks: most need no parse
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 {
		return false
	}
	st := f.Stmts[0]
	if st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 {
		return false
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) < 2 {
		return false
	}
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		lit, ok := literal(w)
		if !ok {
			return false
		}
		words = append(words, lit)
	}
	return filepath.Base(words[0]) == "debussy" && ownSubcommands[words[1]]
}

// literal is a word's value when it holds no expansion: plain text,
// single quotes, double quotes around plain text.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}
