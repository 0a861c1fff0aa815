package runner

import (
	"fmt"
	"strconv"
	"strings"
)

// The Claude Code versions debussy is measured on: CI runs the end-to-end
// core (restart, handoff, done, stop, usage limit) on OldestCLI, on the
// pinned version the suite is written against, and on npm's latest, which
// was NewestTestedCLI when this was written. Keep OldestCLI in step with
// scripts/install-claude.sh and the README ("Claude Code versions").
const (
	// OldestCLI is the oldest version whose PostToolUse hook answer
	// continue:false ends the session after the tool (2.1.105 and 2.1.100 run the
	// next request instead, so a handoff's stop comes late).
	OldestCLI       = "2.1.112"
	NewestTestedCLI = "2.1.332"
)

// CLIVersionNote says how a `claude --version` line stands against the
// supported range: "" inside it or when the version cannot be read.
func CLIVersionNote(version string) string {
	v, ok := parseVersion(version)
	if !ok {
		return ""
	}
	oldest, _ := parseVersion(OldestCLI)
	newest, _ := parseVersion(NewestTestedCLI)
	switch {
	case compareVersions(v, oldest) < 0:
		return fmt.Sprintf("claude %s is older than %s, the oldest version debussy supports: stops and handoffs may not end the session where they should",
			fmtVersion(v), OldestCLI)
	case compareVersions(v, newest) > 0:
		return fmt.Sprintf("claude %s is newer than %s, the newest version debussy was tested on: report what differs",
			fmtVersion(v), NewestTestedCLI)
	}
	return ""
}

// parseVersion reads "2.1.332 (Claude Code)" or "2.1.332".
func parseVersion(s string) ([3]int, bool) {
	var v [3]int
	f := strings.Fields(s)
	if len(f) == 0 {
		return v, false
	}
	parts := strings.Split(strings.TrimPrefix(f[0], "v"), ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

func compareVersions(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func fmtVersion(v [3]int) string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }
