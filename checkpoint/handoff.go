package checkpoint

import (
	"path"
	"regexp"
	"strings"
)

// handoffRunes bounds the agent's handoff in a checkpoint (about 16 KB):
// it is embedded verbatim, but must not crowd out the next session's work.
const handoffRunes = 16 << 10

// maxHandoffPaths bounds how many files named by a handoff are checked.
const maxHandoffPaths = 50

// HandoffTemplate is what the agent is asked to fill in when its session
// must end (seed context budget protocol).
func HandoffTemplate() string {
	return "## Completed\n" +
		"What is done and verified (files, tests that pass).\n\n" +
		"## In progress\n" +
		"The step you were on: its state, partial outputs (files half-written, commands half-run), what remains of it.\n\n" +
		"## Remaining\n" +
		"The phase's work not started yet, in order.\n\n" +
		"## Critical context\n" +
		"Decisions made and why, gotchas found, approaches that failed — what the next session cannot see in git.\n\n" +
		"## Resume instructions\n" +
		"The first concrete steps for the next session.\n"
}

// fileExts are the extensions that make a word in a handoff a file name.
// A list, not any ".xyz": handoffs are full of Go selectors such as
// `p.handoff` and `fmt.Errorf`.
var fileExts = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`go mod sum work md markdown txt rst adoc json jsonl ndjson yaml yml toml ini cfg
		conf env properties py pyi ipynb js mjs cjs ts mts cts tsx jsx vue svelte rs c h cc cpp cxx hpp hh java kt kts
		scala groovy gradle rb php cs swift dart lua pl jl exs erl hs zig nim sh bash zsh fish ps1 bat sql
		graphql gql proto html htm css scss sass xml svg csv tsv golden tmpl tpl gotmpl tf tfvars hcl lock mk cmake
		nix dockerfile patch diff log pem crt key`) {
		fileExts[e] = true
	}
}

// lineSuffix is the ":41" or ":41:7" of a compiler's file position.
var lineSuffix = regexp.MustCompile(`(?::\d+)+$`)

// handoffPaths are the file names a handoff mentions, in backticks or as
// bare words, first mention first.
func handoffPaths(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.Fields(strings.ReplaceAll(s, "`", " ")) {
		p, ok := filePath(w)
		if !ok || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
		if len(out) == maxHandoffPaths {
			break
		}
	}
	return out
}

// filePath reports whether word names a file, and which.
func filePath(word string) (string, bool) {
	w := strings.Trim(word, `"'()[]{}<>,;!?*`)
	w = strings.TrimRight(lineSuffix.ReplaceAllString(strings.TrimRight(w, ".:"), ""), ".:")
	if w == "" || strings.ContainsAny(w, " \t*?$%=@#|\\") || strings.Contains(w, "://") || strings.HasPrefix(w, "-") {
		return "", false
	}
	base := path.Base(w)
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 || !fileExts[strings.ToLower(base[dot+1:])] {
		return "", false
	}
	return w, true
}

// missingPaths are the files the handoff names that debussy cannot find:
// not among git's changes, not written in the session, and not existing.
func missingPaths(handoff string, files []FileChange, touched []string, exists func(string) bool) []string {
	if exists == nil || strings.TrimSpace(handoff) == "" {
		return nil
	}
	var out []string
	for _, p := range handoffPaths(handoff) {
		if knownPath(p, files, touched) || exists(p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// knownPath matches a handoff's path against git's relative paths and the
// stream's absolute ones by suffix, either way: the agent may write
// `parser.go` for parser/parser.go.
func knownPath(p string, files []FileChange, touched []string) bool {
	p = strings.TrimPrefix(p, "./")
	match := func(q string) bool {
		return q == p || strings.HasSuffix(q, "/"+p) || strings.HasSuffix(p, "/"+q)
	}
	for _, f := range files {
		if match(f.Path) {
			return true
		}
	}
	for _, t := range touched {
		if match(t) {
			return true
		}
	}
	return false
}
