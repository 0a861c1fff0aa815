// Package telemetry exports a run's traces with OpenTelemetry when the
// standard OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set: a
// span per run, phase, session, gate and commit, over OTLP/HTTP. Each
// claude child gets the W3C TRACEPARENT of its session's span (and its run,
// phase and session in OTEL_RESOURCE_ATTRIBUTES), so the CLI's own spans
// join the trace. Unset, the Tracer is a no-op: no exporter, no
// TRACEPARENT, nothing slower.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Environment variables the child and the exporter read.
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvTraceParent    = "TRACEPARENT"
	EnvResourceAttrs  = "OTEL_RESOURCE_ATTRIBUTES"
)

// Span is one span; a no-op one when tracing is off.
type Span = trace.Span

// Tracer starts the run's spans. A nil *Tracer, or one made without an
// endpoint, starts no-op spans.
type Tracer struct {
	tp     *sdktrace.TracerProvider // nil when off
	tracer trace.Tracer
	// parent is the caller's own trace (a TRACEPARENT debussy was started
	// with, e.g. in a traced CI job): the run's span joins it.
	parent trace.SpanContext
	// userAttrs is the user's OTEL_RESOURCE_ATTRIBUTES, kept for the child.
	userAttrs string
	// endpoint is where the spans go, for the line that says so.
	endpoint string
	// errs counts the SDK's export errors; the first went to onError.
	errs    atomic.Int64
	onError func(error)
}

var noopTracer = noop.NewTracerProvider().Tracer("debussy")

// New returns the run's tracer: exporting when getenv names an OTLP
// endpoint (and OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER do not turn it
// off), else a no-op. The exporter reads the other standard OTEL_*
// variables (headers, protocol, timeout, service name) itself.
//
// The SDK's own errors (an endpoint that refuses the spans) go to onError,
// the first only: the SDK would print each to stderr in its own format,
// once per batch, through the run's log lines; Errors counts them all.
func New(ctx context.Context, getenv func(string) string, version string, onError func(error)) (*Tracer, error) {
	if getenv == nil || !Enabled(getenv) {
		return &Tracer{tracer: noopTracer}, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("start the OTLP trace exporter: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", "debussy")}
	if version != "" {
		attrs = append(attrs, attribute.String("service.version", version))
	}
	// Later detectors win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// override debussy's defaults.
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && res == nil {
		res = resource.NewSchemaless(attrs...)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t := &Tracer{tp: tp, tracer: tp.Tracer("github.com/debussy-dev/debussy"), userAttrs: getenv(EnvResourceAttrs),
		endpoint: Endpoint(getenv), onError: onError}
	// The SDK reports through the process's one handler: debussy runs one
	// tracer per process.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(t.handle))
	if tp := getenv(EnvTraceParent); tp != "" {
		carrier := propagation.MapCarrier{"traceparent": tp}
		t.parent = trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
	}
	return t, nil
}

// handle takes one of the SDK's errors: the first is reported, the rest
// counted.
func (t *Tracer) handle(err error) {
	if t.errs.Add(1) == 1 && t.onError != nil {
		t.onError(err)
	}
}

// Errors is how many errors the SDK reported (export failures).
func (t *Tracer) Errors() int64 {
	if t == nil {
		return 0
	}
	return t.errs.Load()
}

// Endpoint is where getenv sends traces: the traces endpoint as given, or
// the general endpoint with /v1/traces, as the exporter resolves them.
func Endpoint(getenv func(string) string) string {
	if e := getenv(EnvTracesEndpoint); e != "" {
		return e
	}
	if e := getenv(EnvEndpoint); e != "" {
		return strings.TrimRight(e, "/") + "/v1/traces"
	}
	return ""
}

// Where is the endpoint spans are exported to, without the parts of a URL
// that may carry a credential (user info, query, fragment), so it may be
// logged where a CI job's log shows it; "" when off.
func (t *Tracer) Where() string {
	if !t.On() {
		return ""
	}
	return Shown(t.endpoint)
}

// Shown is endpoint as a log line may show it: scheme, host and path, with
// user info, query and fragment dropped; "[unparsable endpoint]" when it is
// not a URL.
func Shown(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "[unparsable endpoint]"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// Enabled reports whether getenv asks for traces to be exported.
func Enabled(getenv func(string) string) bool {
	if getenv(EnvEndpoint) == "" && getenv(EnvTracesEndpoint) == "" {
		return false
	}
	if v, err := strconv.ParseBool(getenv("OTEL_SDK_DISABLED")); err == nil && v {
		return false
	}
	return getenv("OTEL_TRACES_EXPORTER") != "none"
}

// On reports whether spans are exported.
func (t *Tracer) On() bool { return t != nil && t.tp != nil }

// Start starts a span named name under the span in ctx. The run's root
// span (ctx without one) joins the TRACEPARENT debussy was started with.
func (t *Tracer) Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, Span) {
	if !t.On() {
		return ctx, trace.SpanFromContext(context.Background()) // a no-op span
	}
	if !trace.SpanContextFromContext(ctx).IsValid() && t.parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, t.parent)
	}
	return t.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// ChildEnv is what a claude child started under the span in ctx gets:
// TRACEPARENT naming that span, and OTEL_RESOURCE_ATTRIBUTES with extra
// appended to the user's own. Empty when tracing is off.
func (t *Tracer) ChildEnv(ctx context.Context, extra ...attribute.KeyValue) map[string]string {
	if !t.On() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	env := map[string]string{}
	if tp := carrier.Get("traceparent"); tp != "" {
		env[EnvTraceParent] = tp
	}
	parts := []string{}
	if t.userAttrs != "" {
		parts = append(parts, t.userAttrs)
	}
	for _, kv := range extra {
		parts = append(parts, string(kv.Key)+"="+escapeAttr(kv.Value.Emit()))
	}
	if len(parts) > 0 {
		env[EnvResourceAttrs] = strings.Join(parts, ",")
	}
	return env
}

// escapeAttr percent-encodes what OTEL_RESOURCE_ATTRIBUTES cannot hold
// as is (the W3C baggage value rules it follows).
func escapeAttr(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || c == ',' || c == ';' || c == '=' || c == '%' || c == '"' || c == '\\' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// End ends span with attrs; failed, when not "", marks it an error with
// that description — debussy's own word for the outcome (a status, a
// failure class), never an error's text, which may quote tool output.
func End(span Span, failed string, attrs ...attribute.KeyValue) {
	if !span.IsRecording() {
		span.End()
		return
	}
	span.SetAttributes(attrs...)
	if failed != "" {
		span.SetStatus(codes.Error, failed)
	}
	span.End()
}

// Shutdown flushes the spans not yet exported, waiting at most timeout.
func (t *Tracer) Shutdown(timeout time.Duration) error {
	if !t.On() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := t.tp.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("flush traces: not done within %s", timeout)
	}
	if err != nil {
		return fmt.Errorf("flush traces: %w", err)
	}
	return nil
}
