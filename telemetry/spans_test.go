package telemetry

import (
	"context"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// A run's facts make its spans: run → phase → session, gate and commit,
// each at the fact's time (a gate's and a commit's start is its end less
// its duration), and a session's TRACEPARENT names its span.
func TestSpansFromFacts(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tr := &Tracer{tp: tp, tracer: tp.Tracer("test")}
	t0 := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	run := &state.Run{ID: "r1", Phases: []*state.PhaseRecord{{ID: "1", Attempts: 1, Sessions: 1}}}
	s := tr.Spans(context.Background(), "r1", "Plan")
	s.Tell(at(1), record.PhaseStarted{Phase: "1", Short: "One"}, run)
	s.Tell(at(2), record.SessionSpawned{Phase: "1", Session: 1}, run)
	env := s.ChildEnv("1", 1)
	s.Tell(at(5), record.SessionEnded{Phase: "1", Session: 1, Outcome: "completed", PeakTokens: 9000}, run)
	dur, code, no := int64(2000), 0, false
	s.Tell(at(9), record.Gate{Phase: "1", Gate: "test", DurationMs: &dur, ExitCode: &code, TimedOut: &no, Passed: true}, run)
	s.Tell(at(10), record.Commit{Phase: "1", Commit: "abc", Kind: "completed", DurationMs: 500}, run)
	run.Status, run.Phases[0].Status = state.StatusCompleted, state.StatusCompleted
	s.Tell(at(11), record.PhaseEnded{Phase: "1", Status: "completed"}, run)
	s.Tell(at(12), record.RunEnded{Status: "completed"}, run)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	spans := map[string]tracetest.SpanStub{}
	for _, sp := range exp.GetSpans() {
		spans[sp.Name] = sp
	}
	root, phase, sess, gate, commit := spans["debussy.run"], spans["debussy.phase"], spans["debussy.session"], spans["debussy.gate"], spans["debussy.commit"]
	if len(spans) != 5 || phase.Parent.SpanID() != root.SpanContext.SpanID() || sess.Parent.SpanID() != phase.SpanContext.SpanID() ||
		gate.Parent.SpanID() != phase.SpanContext.SpanID() || commit.Parent.SpanID() != phase.SpanContext.SpanID() {
		t.Fatalf("spans %v: want run → phase → session, gate, commit", exp.GetSpans())
	}
	if !sess.StartTime.Equal(at(2)) || !sess.EndTime.Equal(at(5)) || !gate.StartTime.Equal(at(7)) || !commit.StartTime.Equal(at(10).Add(-500*time.Millisecond)) {
		t.Errorf("times: session %s–%s, gate from %s, commit from %s", sess.StartTime, sess.EndTime, gate.StartTime, commit.StartTime)
	}
	if tp := env[EnvTraceParent]; !strings.Contains(tp, sess.SpanContext.SpanID().String()) || !strings.Contains(env[EnvResourceAttrs], "debussy.session=1") {
		t.Errorf("child env %v does not name session span %s", env, sess.SpanContext.SpanID())
	}
}

// A run refused before it started still ends its span, as refused.
func TestSpansRefused(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	s := (&Tracer{tp: tp, tracer: tp.Tracer("test")}).Spans(context.Background(), "r1", "Plan")
	_ = s.Close()
	if got := exp.GetSpans(); len(got) != 1 || got[0].Status.Description != "refused" {
		t.Fatalf("spans %v", got)
	}
}
