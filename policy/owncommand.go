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
// or not), no redirection, pipe, list, substitution or assignment, whose
// program isSelf says is debussy's own executable. A shell parser decides,
// not a pattern: `debussy done; rm -rf x` or `debussy done $(curl …)` is
// not debussy's command, whatever its prefix; and the file decides, not
// its name: `./tools/debussy done` runs whatever that file is.
func OwnCommand(cmd string, isSelf func(program string) bool) bool {
	if isSelf == nil || !strings.Contains(cmd, "debussy") {
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
	return filepath.Base(words[0]) == "debussy" && ownSubcommands[words[1]] && isSelf(words[0])
}

// RunsOwn reports whether a command line runs `debussy sub` anywhere in
// it: alone, chained (`mkdir -p notes && debussy handoff …`), in a
// pipeline or subshell, env-prefixed, by a path, or inside `bash -c '…'`.
// It only lets a call through the handoff stage (the call writes the
// handoff or signals); whether the agent signalled is read from the
// signal on disk, never from this.
func RunsOwn(cmd, sub string) bool {
	if !strings.Contains(cmd, "debussy") || !strings.Contains(cmd, sub) {
		return false
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		return strings.Contains(cmd, "debussy "+sub)
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || found {
			return !found
		}
		words := make([]string, 0, len(call.Args))
		for _, w := range call.Args {
			lit, _ := literal(w) // an expansion leaves "": no match
			words = append(words, lit)
		}
		for i := 0; i+1 < len(words); i++ {
			switch {
			case filepath.Base(words[i]) == "debussy" && words[i+1] == sub:
				found = true
			case words[i] == "-c" && isShell(words[0]) && RunsOwn(words[i+1], sub):
				found = true
			}
			if i == 0 && !isWrapper(words[0]) {
				break // only a wrapper (env, bash -c, nohup…) runs another program
			}
		}
		return !found
	})
	return found
}

// isShell reports whether a program is a shell that takes -c.
func isShell(prog string) bool {
	switch filepath.Base(prog) {
	case "sh", "bash", "zsh", "dash":
		return true
	}
	return false
}

// isWrapper reports whether a program runs the command in its arguments.
func isWrapper(prog string) bool {
	switch filepath.Base(prog) {
	case "env", "nohup", "time", "timeout", "nice", "exec", "command", "xargs":
		return true
	}
	return isShell(prog)
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
