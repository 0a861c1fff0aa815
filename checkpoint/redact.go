package checkpoint

import (
	"regexp"
	"strings"
)

// Redacted replaces a secret's value.
const Redacted = "[redacted]"

// secretName is a variable, flag or field name that announces a secret.
// Any name containing one of these words counts, so "monkey=banana" and
// "KEYBOARD=us" are redacted too: a few lost values are cheaper than one
// leaked key. A name without a value ("the KEYBOARD layout") is kept.
const secretName = `(?i:[A-Za-z0-9_.-]*(?:key|token|secret|password|passwd)[A-Za-z0-9_.-]*)`

// secretValues are tokens that are secrets on their own, whatever names
// them.
var secretValues = []*regexp.Regexp{
	// PEM private keys, the whole block; a block cut short (clipped
	// output) is redacted to the end.
	regexp.MustCompile(`(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`),
	// The end of a block whose start was cut off (a gate's output keeps
	// its tail): the base64 lines before its END line, and the line the
	// cut went through.
	regexp.MustCompile(`(?m)(?:^.*\n)?(?:^[A-Za-z0-9+/=]+\r?\n)*^-----END [A-Z0-9 ]*PRIVATE KEY-----`),
	// OpenAI and Anthropic (sk-ant-…) keys; the length keeps "sk-learn" out.
	regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`),
	// GitHub tokens.
	regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`),
	// AWS access key ids.
	regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`),
	// Slack tokens.
	regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`),
	// HTTP bearer credentials.
	regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*`),
}

// secretFields keep the name and redact the value: $1 is everything up to
// the value, $2 what follows it.
var secretFields = []*regexp.Regexp{
	// JSON: "api_key": "value"
	regexp.MustCompile(`("` + secretName + `"\s*:\s*")(?:[^"\\\n]|\\.)+(")`),
	// NAME="value", NAME = 'value' (shell, TOML, Python)
	regexp.MustCompile(`(\b` + secretName + `\s*=\s*")[^"\n]+(")`),
	regexp.MustCompile(`(\b` + secretName + `\s*=\s*')[^'\n]+(')`),
	// NAME=value (env, flags such as --api-key=value)
	regexp.MustCompile(`(\b` + secretName + `=)[^\s"'` + "`" + `]+()`),
	// NAME: value (YAML, HTTP headers); the colon right after the name
	// keeps Go's "token := next()" out.
	regexp.MustCompile(`(\b` + secretName + `:[ \t]+)[^\s"'` + "`" + `]+()`),
}

// Redact replaces values that look like secrets — API keys and tokens,
// private keys, and the values of NAME=value or NAME: value where NAME
// contains KEY, TOKEN, SECRET or PASSWORD — with [redacted]. Handoffs,
// checkpoints and restart prompts carry text from tool output, tool input
// and the agent; none of it may carry a secret into a file or a prompt.
func Redact(s string) string {
	if s == "" {
		return s
	}
	// Most text names no secret: a cheap look first keeps the regexps off
	// the event loop's hot path (every tool call's summary passes here).
	lower := strings.ToLower(s)
	if containsAny(lower, valueHints) {
		for _, re := range secretValues {
			s = re.ReplaceAllString(s, Redacted)
		}
	}
	if containsAny(lower, nameHints) {
		for _, re := range secretFields {
			s = re.ReplaceAllString(s, "${1}"+Redacted+"${2}")
		}
	}
	return s
}

// Lower-case substrings without which no pattern above can match.
var (
	valueHints = []string{"private key", "sk-", "gh", "github_pat_", "akia", "xox", "bearer"}
	nameHints  = []string{"key", "token", "secret", "passw"}
)

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

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
