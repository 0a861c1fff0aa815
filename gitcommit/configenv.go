package gitcommit

import (
	"errors"
	"strings"
)

// configParameters parses GIT_CONFIG_PARAMETERS, which `git -c key=value`
// exports to every git it runs (hooks, aliases, a wrapper): shell-quoted
// 'key'='value' pairs (git 2.31+) or 'key=value' words, as git's
// git_config_from_parameters reads them. A value of nil is a bare key
// ("-c core.fileMode"). Anything else is an error, as for git.
func configParameters(env string) (keys []string, values []*string, err error) {
	bogus := errors.New("bogus format in GIT_CONFIG_PARAMETERS (git refuses it too)")
	cur := env // git skips no leading space: that is bogus too
	for cur != "" {
		key, rest, ok := sqDequoteStep(cur)
		if !ok {
			return nil, nil, bogus
		}
		var value *string
		switch {
		case rest == "" || isConfigSpace(rest[0]):
			// Old style: 'key=value'.
			k, v, hasValue := strings.Cut(key, "=")
			key = strings.TrimSpace(k)
			if hasValue {
				value = &v
			}
		case rest[0] == '=':
			rest = rest[1:]
			switch {
			case rest != "" && rest[0] == '\'':
				v, r, ok := sqDequoteStep(rest)
				if !ok || (r != "" && !isConfigSpace(r[0])) {
					return nil, nil, bogus
				}
				value, rest = &v, r
			case rest == "" || isConfigSpace(rest[0]):
			default:
				return nil, nil, bogus
			}
		default:
			return nil, nil, bogus
		}
		if key == "" {
			return nil, nil, bogus
		}
		keys, values = append(keys, canonicalKey(key)), append(values, value)
		cur = strings.TrimLeft(rest, " \t\n\r")
	}
	return keys, values, nil
}

// sqDequoteStep is git's sq_dequote_step: one single-quoted word, where
// '\” and '\!' stand for a quote and a "!"; rest is what follows it.
func sqDequoteStep(s string) (word, rest string, ok bool) {
	if s == "" || s[0] != '\'' {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; ; i++ {
		if i >= len(s) {
			return "", "", false
		}
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+3 < len(s) && s[i+1] == '\\' && (s[i+2] == '\'' || s[i+2] == '!') && s[i+3] == '\'' {
			b.WriteByte(s[i+2])
			i += 3
			continue
		}
		return b.String(), s[i+1:], true
	}
}
