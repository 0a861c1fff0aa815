package commands

import (
	"context"
	"log/slog"
	"time"

	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/telemetry"
)

// traceFlushWait bounds how long the end of a run waits for its last
// spans to reach the OTLP endpoint.
const traceFlushWait = 5 * time.Second

// startTracer is the run's tracer: exporting when the standard
// OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set, else a no-op. An exporter
// that cannot start costs the traces only: a warning, never the run. The
// start says where the spans go; the SDK's export errors reach the log
// once, in its format, not stderr raw at every batch.
func (e *Env) startTracer(ctx context.Context, logger *slog.Logger) *telemetry.Tracer {
	t, err := telemetry.New(ctx, e.Getenv, version(), func(err error) {
		logger.Warn("traces not exported (further export errors are counted, not shown)", "endpoint", public.Own(telemetry.Shown(telemetry.Endpoint(e.Getenv))), "err", err)
	})
	if err != nil {
		logger.Warn("traces off", "err", err)
		return nil
	}
	if t.On() {
		logger.Info("exporting traces over OTLP/HTTP", "endpoint", public.Own(t.Where()))
	}
	return t
}

// endTracer flushes the run's last spans and says what was lost.
func endTracer(t *telemetry.Tracer, logger *slog.Logger) {
	err := t.Shutdown(traceFlushWait)
	switch n := t.Errors(); {
	case err != nil:
		logger.Warn("traces not all exported", "endpoint", public.Own(t.Where()), "err", err, "export_errors", n)
	case n > 0:
		logger.Warn("traces not all exported", "endpoint", public.Own(t.Where()), "export_errors", n)
	}
}
