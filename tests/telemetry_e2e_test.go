package tests

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// otlpReceiver is a loopback OTLP/HTTP endpoint: it decodes every span
// exported to it.
type otlpReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
	attrs []string // resource attributes seen, key=value
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	rc := &otlpReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.GetResource().GetAttributes() {
				rc.attrs = append(rc.attrs, kv.Key+"="+kv.GetValue().GetStringValue())
			}
			for _, ss := range rs.ScopeSpans {
				rc.spans = append(rc.spans, ss.Spans...)
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *otlpReceiver) got() []*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*tracepb.Span(nil), rc.spans...)
}

func spanAttr(s *tracepb.Span, key string) (string, bool) {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			if v, ok := kv.GetValue().Value.(*commonpb.AnyValue_IntValue); ok {
				return strconv.FormatInt(v.IntValue, 10), true
			}
			return kv.GetValue().GetStringValue(), true
		}
	}
	return "", false
}

// With an OTLP endpoint set: one root span per run, a phase span under it,
// session spans carrying the phase, and the TRACEPARENT the claude child
// received names its session's span in the same trace.
func TestTracesJoinTheChild(t *testing.T) {
	claudetest.CLISensitive(t, "TRACEPARENT in the CLI child")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			// The CLI keeps OTEL_* variables from its tools: the
			// resource attributes are read from its own environment.
			turn(10000, fakeapi.Bash(`echo "$TRACEPARENT" > traceparent.txt; p=$$; for i in 1 2 3 4 5 6; do p=$(awk '{print $4}' /proc/$p/stat); tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep '^OTEL_RESOURCE_ATTRIBUTES=' && break; done > resattrs.txt`)),
			turn(11000, done("1")),
			turn(12000, fakeapi.Text("Done.")),
		}},
	}}
	// sandbox: off — the command reads claude's own environment in /proc;
	// in the sandbox, claude's sandbox runs it in a PID namespace of its
	// own, where claude is not to be found.
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "One", Gates: []string{"file: `test -f traceparent.txt`"}}}, "sandbox: off\n")
	rc := newOTLPReceiver(t)
	h.Env = append(h.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+rc.URL, "OTEL_RESOURCE_ATTRIBUTES=team=infra", "OTEL_BSP_SCHEDULE_DELAY=200")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	// The start says that, and where, traces are exported.
	if !strings.Contains(r.Stderr, "exporting traces over OTLP/HTTP endpoint="+rc.URL+"/v1/traces") {
		t.Errorf("the start does not say where traces go:\n%s", r.Stderr)
	}
	spans := rc.got()
	byName := map[string][]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	roots := byName["debussy.run"]
	if len(roots) != 1 || len(roots[0].ParentSpanId) != 0 {
		t.Fatalf("want one root debussy.run span, got %d (spans: %d)", len(roots), len(spans))
	}
	root := roots[0]
	for _, s := range spans {
		if string(s.TraceId) != string(root.TraceId) {
			t.Errorf("span %s is in another trace", s.Name)
		}
	}
	phases := byName["debussy.phase"]
	if len(phases) != 1 || string(phases[0].ParentSpanId) != string(root.SpanId) {
		t.Fatalf("want one phase span under the run's")
	}
	sessions := byName["debussy.session"]
	if len(sessions) == 0 {
		t.Fatal("no session span")
	}
	for _, s := range sessions {
		if v, ok := spanAttr(s, "debussy.phase"); !ok || v != "1" || string(s.ParentSpanId) != string(phases[0].SpanId) {
			t.Errorf("session span without the phase, or not under it: %v", s.Attributes)
		}
	}
	if len(byName["debussy.gate"]) != 1 || len(byName["debussy.commit"]) == 0 {
		t.Errorf("want a gate span and commit spans: %d, %d", len(byName["debussy.gate"]), len(byName["debussy.commit"]))
	}
	data, err := os.ReadFile(filepath.Join(h.Repo, "traceparent.txt"))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(strings.TrimSpace(string(data)), "-")
	if len(parts) != 4 || parts[0] != "00" {
		t.Fatalf("the child's TRACEPARENT = %q", data)
	}
	if parts[1] != hex.EncodeToString(root.TraceId) || parts[2] != hex.EncodeToString(sessions[0].SpanId) {
		t.Errorf("TRACEPARENT %q does not name the session span %x of trace %x", data, sessions[0].SpanId, root.TraceId)
	}
	attrs, _ := os.ReadFile(filepath.Join(h.Repo, "resattrs.txt"))
	for _, want := range []string{"team=infra", "debussy.phase=1", "debussy.session=1", "debussy.run="} {
		if !strings.Contains(string(attrs), want) {
			t.Errorf("the child's OTEL_RESOURCE_ATTRIBUTES %q lacks %q", attrs, want)
		}
	}
}

// Without an endpoint the child gets no TRACEPARENT.
func TestNoTracesNoTraceparent(t *testing.T) {
	claudetest.OncePerSuite(t, "no exporter when OTEL_* is unset: debussy's own")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Bash(`echo "[$TRACEPARENT]" > traceparent.txt`)),
			turn(11000, done("1")),
			turn(12000, fakeapi.Text("Done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "One"}}, "")
	h.Env = withoutVar(withoutVar(h.Env, "OTEL_EXPORTER_OTLP_ENDPOINT"), "TRACEPARENT")
	if r := h.run("run", "plan/MASTER_PLAN.md"); r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if data, _ := os.ReadFile(filepath.Join(h.Repo, "traceparent.txt")); strings.TrimSpace(string(data)) != "[]" {
		t.Errorf("the child got TRACEPARENT %q with tracing off", data)
	}
}
