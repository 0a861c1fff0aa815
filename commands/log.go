package commands

import (
	"io"
	"log/slog"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/log"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/internal/buildinfo"
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

// version is the version line's text: the stamped release, or a dev
// build with what is known of it (internal/buildinfo).
func version() string { return buildinfo.Get().String() }
