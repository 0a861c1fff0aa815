package commands

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// completeFlag is the last argument of a completion request: the scripts
// call `debussy WORDS... CUR --generate-bash-completion`, CUR being the
// word under the cursor ("" when there is none yet; scripts written before
// debussy 54 passed it only when it began with "-").
const completeFlag = "--generate-bash-completion"

// complete answers a completion request itself rather than through
// urfave/cli, which reads the words from os.Args and answers nothing once
// a "--" is among them (bash passes `debussy run --` for `run --<TAB>`).
// It prints the candidates one a line; the shell filters them by CUR. With
// none printed the shell completes file names.
func (e *Env) complete(app *cli.App, words []string) {
	// The word under the cursor: "" or a flag being typed, or a value
	// being typed after a flag that takes one.
	cur := ""
	if n := len(words); n > 0 && (words[n-1] == "" || strings.HasPrefix(words[n-1], "-") ||
		n > 1 && strings.HasPrefix(words[n-2], "-") && flagTakesValue(app, words[:n-1], words[n-2])) {
		cur, words = words[n-1], words[:n-1]
	}
	var cmd *cli.Command
	var rest []string // the words after the command's name
	for i, w := range words {
		if strings.HasPrefix(w, "-") {
			continue
		}
		cmd = findCommand(app, w)
		rest = words[i+1:]
		break
	}
	// A subcommand (config example).
	for cmd != nil && len(cmd.Subcommands) > 0 && len(rest) > 0 && cmd.Command(rest[0]) != nil {
		cmd, rest = cmd.Command(rest[0]), rest[1:]
	}
	out := func(list ...string) {
		for _, s := range list {
			fmt.Fprintln(e.Stdout, s)
		}
	}
	switch {
	case cmd == nil && strings.HasPrefix(cur, "-"):
		out("--help", "--version")
	case cmd == nil:
		for _, c := range app.Commands {
			if !c.Hidden {
				out(c.Name)
			}
		}
	case strings.HasPrefix(cur, "-"):
		out(flagWords(cmd, cur)...)
	case len(rest) > 0 && takesValue(cmd, rest[len(rest)-1]):
		out(e.flagValues(cmd, strings.TrimLeft(rest[len(rest)-1], "-"), rest)...)
	case len(cmd.Subcommands) > 0:
		for _, c := range cmd.Subcommands {
			out(c.Name)
		}
	case cmd.Name == "completion":
		out("bash", "zsh")
	}
}

// flagTakesValue reports whether flag, typed after words, is a flag of
// their command that takes a value.
func flagTakesValue(app *cli.App, words []string, flag string) bool {
	for _, w := range words {
		if c := findCommand(app, w); c != nil {
			return takesValue(c, flag)
		}
	}
	return false
}

// flagWords are cmd's flags as typed, "--name" (and "-x" for a one-letter
// alias when cur does not start with "--"), that begin with cur.
func flagWords(cmd *cli.Command, cur string) []string {
	var list []string
	for _, f := range append(slices.Clone(cmd.Flags), cli.HelpFlag) {
		for _, n := range f.Names() {
			w := "--" + n
			if len(n) == 1 {
				if strings.HasPrefix(cur, "--") {
					continue
				}
				w = "-" + n
			}
			if strings.HasPrefix(w, cur) && !slices.Contains(list, w) {
				list = append(list, w)
			}
		}
	}
	return list
}

// takesValue reports whether word is one of cmd's flags that takes a
// value given as the next word (not --flag=value, not a boolean).
func takesValue(cmd *cli.Command, word string) bool {
	if !strings.HasPrefix(word, "-") || strings.Contains(word, "=") {
		return false
	}
	name := strings.TrimLeft(word, "-")
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			_, isBool := f.(*cli.BoolFlag)
			return !isBool
		}
	}
	return false
}

// enumWords is an Allowed text that lists words: "text, json".
var enumWords = regexp.MustCompile(`^[A-Za-z]+(, [A-Za-z]+)+$`)

// flagValues are the values flag --name of cmd takes, when debussy knows
// them: a config key's allowed words, the phases of the plan among the
// words (else of the newest run), run ids, a few fixed lists. None: the
// shell completes file names.
func (e *Env) flagValues(cmd *cli.Command, name string, words []string) []string {
	switch name {
	case "base":
		return []string{"deps", "HEAD"}
	case "format":
		if cmd.Name == "pipeline" {
			return []string{"github", "gitlab", "k8s"}
		}
	case "phase", "only":
		return e.phaseIDs(words)
	case "run":
		return e.runIDs()
	case "status":
		if cmd.Name == "done" {
			return []string{"completed", "blocked", "failed"}
		}
	}
	key, ok := flagKeys[name]
	if !ok {
		key = strings.ReplaceAll(name, "-", "_")
	}
	if a := config.Allowed(key); enumWords.MatchString(a) {
		return strings.Split(a, ", ")
	}
	return nil
}

// phaseIDs are the phases of the master plan named among words (a .md
// file), else of the newest run in the ledger.
func (e *Env) phaseIDs(words []string) []string {
	var ids []string
	for _, w := range words {
		if !strings.HasSuffix(strings.ToLower(w), ".md") {
			continue
		}
		if p, err := plans.Load(e.abs(w), plans.Options{}); err == nil {
			for _, ph := range p.Phases {
				ids = append(ids, ph.ID)
			}
			return ids
		}
	}
	if l := e.ledger(); l != nil && len(l.Runs) > 0 {
		for _, p := range l.NewestFirst()[0].Phases {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// runIDs are the ledger's runs, newest first.
func (e *Env) runIDs() []string {
	var ids []string
	if l := e.ledger(); l != nil {
		for _, r := range l.NewestFirst() {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// ledger is the repository's ledger, or nil: completion says nothing
// rather than fail.
func (e *Env) ledger() *state.Ledger {
	_, root, err := e.findRepo()
	if err != nil {
		return nil
	}
	l, err := state.New(filepath.Join(root, state.DirName)).Load()
	if err != nil {
		return nil
	}
	return l
}
