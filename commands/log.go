package commands

import (
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/charmbracelet/log"
)

// newLogger builds the one logger every package receives: charmbracelet's
// text for people (colours only on a terminal, which charm detects), or one
// JSON object per line for CI.
func newLogger(w io.Writer, format string) *slog.Logger {
	opts := log.Options{
		ReportTimestamp: true,
		TimeFormat:      time.TimeOnly,
		Level:           log.InfoLevel,
	}
	if format == "json" {
		opts.Formatter = log.JSONFormatter
		opts.TimeFormat = time.RFC3339
	}
	return slog.New(log.NewWithOptions(w, opts))
}

// version is the module version stamped by `go install`, or "dev".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
