package commands

import (
	"os"
	"path/filepath"

	"github.com/debussy-dev/debussy/claudeconf"
	"github.com/debussy-dev/debussy/public"
)

// ciLoginFinding warns, in CI, about a login that is a copied
// ~/.claude/.credentials.json rather than CLAUDE_CODE_OAUTH_TOKEN or
// ANTHROPIC_API_KEY: an OAuth refresh rotates the refresh token, so when
// many workers share one copied file the first refresh logs the others out
// (and a subprocess cannot refresh at all). ok is false outside CI, with a
// token in the environment, or without such a file.
func ciLoginFinding(getenv func(string) string) (f finding, ok bool) {
	ci := public.InCI(getenv)
	if !ci || getenv("CLAUDE_CODE_OAUTH_TOKEN") != "" || getenv("ANTHROPIC_API_KEY") != "" {
		return finding{}, false
	}
	dir := claudeconf.DirsFor(getenv, "").Config
	if dir == "" {
		return finding{}, false
	}
	creds := filepath.Join(dir, ".credentials.json")
	if _, err := os.Stat(creds); err != nil {
		return finding{}, false
	}
	return finding{"warn", "login",
		"CI logs in with a copied " + creds + ", not CLAUDE_CODE_OAUTH_TOKEN or ANTHROPIC_API_KEY: a refresh rotates its token, so workers sharing the file log each other out mid-run (and claude -p cannot refresh it)",
		"run `claude setup-token` once and give every job its output as the secret CLAUDE_CODE_OAUTH_TOKEN (or set ANTHROPIC_API_KEY)"}, true
}
