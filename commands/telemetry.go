package commands

import (
	"context"
	"log/slog"
	"time"

	"github.com/debussy-dev/debussy/telemetry"
)

// traceFlushWait bounds how long the end of a run waits for its last
// spans to reach the OTLP endpoint.
const traceFlushWait = 5 * time.Second

// startTracer is the run's tracer: exporting when the standard
// OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set, else a no-op. An exporter
// that cannot start costs the traces only: a warning, never the run.
func (e *Env) startTracer(ctx context.Context, logger *slog.Logger) *telemetry.Tracer {
	t, err := telemetry.New(ctx, e.Getenv, version())
	if err != nil {
		logger.Warn("traces off", "err", err)
		return nil
	}
	if t.On() {
		logger.Debug("exporting traces over OTLP/HTTP")
	}
	return t
}
