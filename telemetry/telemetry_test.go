package telemetry

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

func envOf(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestOff(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{EnvEndpoint: "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"},
		{EnvTracesEndpoint: "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none"},
	} {
		tr, err := New(context.Background(), envOf(env), "test", nil)
		if err != nil || tr.On() {
			t.Fatalf("env %v: tracer on (%v)", env, err)
		}
		ctx, span := tr.Start(context.Background(), "x")
		if span.IsRecording() || tr.ChildEnv(ctx) != nil {
			t.Errorf("env %v: an off tracer records or gives the child a TRACEPARENT", env)
		}
		End(span, "failed")
		if err := tr.Shutdown(time.Second); err != nil {
			t.Error(err)
		}
	}
	var nilTracer *Tracer
	if _, span := nilTracer.Start(context.Background(), "x"); span.IsRecording() {
		t.Error("a nil tracer records")
	}
}

// Spans reach an OTLP/HTTP endpoint; the child's TRACEPARENT names the
// span it was started under; the run's root joins a TRACEPARENT debussy
// itself was given.
func TestExport(t *testing.T) {
	var mu sync.Mutex
	var spans []*tracepb.Span
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			w.WriteHeader(400)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
		mu.Unlock()
	}))
	defer srv.Close()
	t.Setenv(EnvEndpoint, srv.URL) // the exporter reads the process's environment
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	tr, err := New(context.Background(), envOf(map[string]string{EnvEndpoint: srv.URL, EnvTraceParent: parent,
		EnvResourceAttrs: "team=infra"}), "test", nil)
	if err != nil || !tr.On() {
		t.Fatalf("tracer off: %v", err)
	}
	ctx, run := tr.Start(context.Background(), "debussy.run")
	sctx, sess := tr.Start(ctx, "debussy.session", attribute.String("debussy.phase", "1"))
	env := tr.ChildEnv(sctx, attribute.String("debussy.phase", "1"), attribute.String("debussy.plan", "a,b"))
	End(sess, "")
	End(run, "failed")
	if err := tr.Shutdown(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	sc := sess.SpanContext()
	if want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"; env[EnvTraceParent] != want {
		t.Errorf("TRACEPARENT = %q, want %q", env[EnvTraceParent], want)
	}
	if got := env[EnvResourceAttrs]; got != "team=infra,debussy.phase=1,debussy.plan=a%2Cb" {
		t.Errorf("OTEL_RESOURCE_ATTRIBUTES = %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(spans) != 2 {
		t.Fatalf("got %d spans, want 2", len(spans))
	}
	for _, s := range spans {
		if !strings.HasPrefix(parent, "00-"+sc.TraceID().String()) {
			t.Errorf("span %s is not in the caller's trace", s.Name)
		}
	}
}

// An endpoint that refuses every batch: the SDK's errors reach the
// caller's handler once (the first), are all counted, and never print to
// stderr in the SDK's own format; Where names the endpoint.
func TestExportErrorsReportedOnce(t *testing.T) {
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(http.StatusBadRequest) // not retried
	}))
	defer srv.Close()
	var stderr bytes.Buffer
	log.SetOutput(&stderr) // where the SDK's default handler prints
	defer log.SetOutput(os.Stderr)
	t.Setenv(EnvEndpoint, srv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20") // ms
	var reported []error
	var mu sync.Mutex
	tr, err := New(context.Background(), envOf(map[string]string{EnvEndpoint: srv.URL}), "test", func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	})
	if err != nil || !tr.On() {
		t.Fatalf("tracer off: %v", err)
	}
	if want := srv.URL + "/v1/traces"; tr.Where() != want {
		t.Errorf("Where() = %q, want %q", tr.Where(), want)
	}
	// Batches go out on the batcher's clock, whose errors the SDK hands to
	// its handler (a flush or the shutdown returns its own).
	for range 3 {
		_, span := tr.Start(context.Background(), "debussy.run")
		End(span, "")
		for n := posts.Load(); posts.Load() == n; {
			time.Sleep(10 * time.Millisecond)
		}
	}
	time.Sleep(50 * time.Millisecond)
	_ = tr.Shutdown(5 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	if posts.Load() < 2 || len(reported) != 1 || tr.Errors() < 2 {
		t.Errorf("%d posts, %d reported, %d counted; want every batch refused, the first reported, all counted", posts.Load(), len(reported), tr.Errors())
	}
	if stderr.Len() > 0 {
		t.Errorf("the SDK printed on its own:\n%s", stderr.String())
	}
}

// What a log line shows of the endpoint carries no credential a URL can
// hold, and keeps what says where the spans go.
func TestShown(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://127.0.0.1:4318/v1/traces", "http://127.0.0.1:4318/v1/traces"},
		{"https://user:s3cr3t@otel.example.com/v1/traces?api-key=s3cr3t#frag", "https://otel.example.com/v1/traces"},
		{"://bad", "[unparsable endpoint]"},
	} {
		if got := Shown(c.in); got != c.want {
			t.Errorf("Shown(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
