package commands

import (
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/log"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/public"
)

// newLogger builds the one logger every package receives: charmbracelet's
// text for people (colours only on a terminal, which charm detects), or one
// JSON object per line for CI. level is a config log level; records below it
// are dropped before any attribute is formatted. With text false a line
// carries structure only (public.Handler): the agent's and its tools' text
// stays in .debussy/.
func newLogger(w io.Writer, format, level string, text bool) *slog.Logger {
	opts := log.Options{
		ReportTimestamp: true,
		TimeFormat:      time.TimeOnly,
		Level:           logLevel(level),
	}
	if format == config.LogJSON {
		opts.Formatter = log.JSONFormatter
		opts.TimeFormat = time.RFC3339
	}
	l := log.NewWithOptions(noQueries{w}, opts)
	l.SetColorProfile(lipgloss.NewRenderer(w).ColorProfile())
	return slog.New(public.NewHandler(l, text))
}

// charmOf is the charmbracelet logger that formats logger's lines.
func charmOf(logger *slog.Logger) (*log.Logger, bool) {
	h := logger.Handler()
	if p, ok := h.(*public.Handler); ok {
		h = p.Inner()
	}
	l, ok := h.(*log.Logger)
	return l, ok
}

// noQueries hides the terminal behind w from termenv: given the terminal
// itself, charm's renderer sends OSC 10/11 colour queries when the logger is
// made, and the terminal's answers land on stdin (seen as "]11;rgb:…" in a
// recorded demo, and read by the budget question as typed input). The colour
// profile still comes from the terminal, through environment and TERM only.
type noQueries struct{ io.Writer }

// logLevel maps a validated config level to charm's; anything else is info.
func logLevel(level string) log.Level {
	switch level {
	case config.LevelDebug:
		return log.DebugLevel
	case config.LevelWarn:
		return log.WarnLevel
	case config.LevelError:
		return log.ErrorLevel
	default:
		return log.InfoLevel
	}
}

// version is the module version stamped by `go install`, or "dev".
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev (built without VCS info)"
	}
	return versionOf(bi)
}

// versionOf is the module's version when it has one (go install …@v1.2.3),
// else the commit the build was stamped with, else what is known: a bare
// "dev" tells nobody which debussy it is.
func versionOf(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v := "dev-" + rev + dirty
		if at != "" {
			v += " (" + at + ", " + bi.GoVersion + ")"
		}
		return v
	}
	return "dev (built without VCS info, " + bi.GoVersion + ")"
}
