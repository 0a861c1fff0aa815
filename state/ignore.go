package state

import "bytes"

// .debussy/ stays out of git: `debussy init` adds its line to .gitignore,
// and a run does not count that line as a change of the user's.

// IgnoreLines are what `debussy init` appends to .gitignore.
const IgnoreLines = "# debussy's run state (ledger, logs, checkpoints)\n.debussy/\n"

// IgnoresState reports whether a .gitignore line already keeps .debussy/ out.
func IgnoresState(line []byte) bool {
	switch string(bytes.TrimSpace(line)) {
	case ".debussy/", ".debussy", "/.debussy/", "/.debussy":
		return true
	}
	return false
}

// OnlyOwnIgnore reports whether work, a .gitignore as it is in the work
// tree, is head (HEAD's) with only blank lines, comments and .debussy/
// lines appended (at least one): what `debussy init` adds.
func OnlyOwnIgnore(head, work []byte) bool {
	head = bytes.ReplaceAll(head, []byte("\r\n"), []byte("\n"))
	work = bytes.ReplaceAll(work, []byte("\r\n"), []byte("\n"))
	added, ok := bytes.CutPrefix(work, head)
	if !ok {
		return false
	}
	if len(head) > 0 && !bytes.HasSuffix(head, []byte("\n")) {
		// init ends the last line before its own.
		if added, ok = bytes.CutPrefix(added, []byte("\n")); !ok {
			return false
		}
	}
	own := false
	for _, line := range bytes.Split(added, []byte("\n")) {
		t := bytes.TrimSpace(line)
		switch {
		case IgnoresState(t):
			own = true
		case len(t) == 0, t[0] == '#':
		default:
			return false
		}
	}
	return own
}
