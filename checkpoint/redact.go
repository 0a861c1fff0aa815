package checkpoint

import "github.com/debussy-dev/debussy/secrets"

// Redacted replaces a secret's value.
const Redacted = secrets.Redacted

// Redact replaces secrets (see package secrets: gitleaks' rules and
// debussy's generic ones) with [redacted]. Handoffs, checkpoints and
// restart prompts carry text from tool output, tool input and the agent;
// none of it may carry a secret into a file or a prompt.
func Redact(s string) string { return secrets.Redact(s) }

func redactAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Redact(s)
	}
	return out
}
