package commands

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/xrash/smetrics"

	"github.com/debussy-dev/debussy/config"
)

// notThere is something asked for that is not there (a run, a session):
// exit 2 like a usage error, without calling it one.
type notThere struct{ msg string }

func (e *notThere) Error() string        { return e.msg }
func (e *notThere) Is(target error) bool { return target == ErrUsage }

func notThereErr(format string, a ...any) error { return &notThere{fmt.Sprintf(format, a...)} }

// closest is the name among names that provided most likely misspells, or
// "" when none is close: Jaro-Winkler (urfave/cli's measure for its own
// suggestions) of at least 0.8. A single letter (-v) is no spelling to
// compare: it names the one long name starting with it, if only one does.
func closest(provided string, names []string) string {
	if len([]rune(provided)) == 1 {
		var match string
		for _, n := range names {
			if len(n) > 1 && strings.HasPrefix(n, provided) {
				if match != "" {
					return ""
				}
				match = n
			}
		}
		return match
	}
	best, score := "", 0.8
	for _, n := range names {
		if s := smetrics.JaroWinkler(provided, n, 0.7, 4); s >= score {
			best, score = n, s
		}
	}
	if best != "" {
		return best
	}
	// A short word is far by Jaro-Winkler even one letter off ("rn" for
	// run): one inserted, dropped or changed letter, if only one name is
	// that close.
	for _, n := range names {
		if len(n) > 1 && smetrics.WagnerFischer(provided, n, 1, 1, 1) == 1 {
			if best != "" {
				return ""
			}
			best = n
		}
	}
	return best
}

// commandNames are the app's commands and their aliases.
func commandNames(app *cli.App) []string {
	var names []string
	for _, c := range app.Commands {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return append(names, "help")
}

// flagNames are the long and short names of a command's flags (the app's
// without a command).
func flagNames(c *cli.Context) []string {
	flags := c.App.Flags
	if c.Command != nil && c.Command.Name != "" && c.Command.Name != c.App.Name {
		flags = c.Command.Flags
	}
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	return append(names, "help")
}

// dashed is a flag name as typed: -v, --verbose.
func dashed(name string) string {
	if len([]rune(name)) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagNamesErrors renames, in config errors a flag caused, the config key
// to the flag the user typed: "--context-threshold: 120 is out of range",
// not "context_threshold: …". Load has checked the file and environment
// already, so a problem without a file or variable came from a flag.
func flagNamesErrors(err error) error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	var out []error
	for _, e := range joined.Unwrap() {
		var fe *config.FieldError
		if errors.As(e, &fe) && fe.File == "" && fe.EnvVar == "" {
			flag := strings.ReplaceAll(fe.Key, "_", "-")
			for f, key := range flagKeys {
				if key == fe.Key {
					flag = f
				}
			}
			renamed := *fe
			renamed.Key = "--" + flag
			e = &renamed
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}
