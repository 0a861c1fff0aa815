package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The answers recorded from the real CLIs (testdata/contextusage/README.md).
func TestParseContextUsageRecorded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file       string
		model      string
		max, total int64
		buffer     int64
		point      int64
		ids        bool // 2.1.330 names categories by id and kind
	}{
		{"2.1.197-default.json", "claude-opus-4-8[1m]", 1_000_000, 17452, 0, 0, false},
		{"2.1.197-sonnet-4-5.json", "claude-sonnet-4-5", 200_000, 27259, 0, 0, false},
		{"2.1.197-sonnet-4-6.json", "claude-sonnet-4-6", 200_000, 27259, 33000, 167_000, false},
		{"2.1.330-default.json", "claude-opus-5-5", 1_000_000, 9525, 33000, 967_000, true},
		{"2.1.330-sonnet-4-5.json", "claude-sonnet-4-5", 200_000, 19079, 0, 0, true},
		{"2.1.330-sonnet-4-6.json", "claude-sonnet-4-6", 200_000, 19079, 33000, 167_000, true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			line, err := os.ReadFile(filepath.Join("testdata", "contextusage", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			ev, err := Parse(line)
			if err != nil {
				t.Fatal(err)
			}
			cu := ev.ContextUsage
			if ev.Kind != KindContextUsage || cu == nil {
				t.Fatalf("kind %s, usage %v", ev.Kind, cu)
			}
			if !cu.OK() || cu.Model != tt.model || cu.MaxTokens != tt.max || cu.RawMaxTokens != tt.max || cu.TotalTokens != tt.total {
				t.Errorf("got %+v", cu)
			}
			if got := cu.AutocompactBuffer(); got != tt.buffer {
				t.Errorf("buffer %d, want %d", got, tt.buffer)
			}
			if got := cu.CompactionPoint(); got != tt.point {
				t.Errorf("compaction point %d, want %d", got, tt.point)
			}
			// Every answer reports the threshold, also where the CLI will
			// not compact on its own: it is not the compaction point.
			if cu.AutoCompactThreshold == 0 || cu.AutoCompactEnabled == nil || !*cu.AutoCompactEnabled {
				t.Errorf("threshold %d enabled %v", cu.AutoCompactThreshold, cu.AutoCompactEnabled)
			}
			var sum int64
			for _, c := range cu.Categories {
				if c.Name == "" || (tt.ids && (c.ID == "" || c.Kind == "")) || (!tt.ids && c.ID != "") {
					t.Errorf("category %+v", c)
				}
				sum += c.Tokens
			}
			// Used + buffer + free space add up to the window, except the
			// deferred tools 2.1.330 lists but does not load.
			var deferred int64
			for _, c := range cu.Categories {
				if c.Kind == "deferred" {
					deferred += c.Tokens
				}
			}
			if sum-deferred != tt.max {
				t.Errorf("categories add up to %d (-%d deferred), want %d", sum, deferred, tt.max)
			}
		})
	}
}

func TestParseContextUsageShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line string
		kind       Kind
		wantErr    string
	}{
		{"refused", `{"type":"control_response","response":{"subtype":"error","request_id":"ctx_1","error":"Unknown subtype: get_context_usage"}}`,
			KindContextUsage, "Unknown subtype"},
		{"no window", `{"type":"control_response","response":{"subtype":"success","request_id":"ctx_2","response":{"categories":[]}}}`,
			KindContextUsage, "no maxTokens"},
		{"wrong types read as zero", `{"type":"control_response","response":{"subtype":"success","request_id":"ctx_3","response":{"maxTokens":"big","categories":[7,{"name":"Skills","tokens":"x"}]}}}`,
			KindContextUsage, "no maxTokens"},
		{"other answers stay control responses", `{"type":"control_response","response":{"subtype":"success","request_id":"init_1","response":{"commands":[]}}}`,
			KindControlResponse, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Parse([]byte(tt.line))
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind != tt.kind {
				t.Fatalf("kind %s", ev.Kind)
			}
			if tt.kind != KindContextUsage {
				return
			}
			if cu := ev.ContextUsage; cu.OK() || !strings.Contains(cu.Error, tt.wantErr) || cu.CompactionPoint() != 0 {
				t.Errorf("got %+v", cu)
			}
		})
	}
}

func TestCompactionPointDisabled(t *testing.T) {
	t.Parallel()
	off := false
	cu := &ContextUsage{MaxTokens: 200_000, AutoCompactEnabled: &off,
		Categories: []ContextCategory{{Name: "Autocompact buffer", Tokens: 33000}}}
	if got := cu.CompactionPoint(); got != 0 {
		t.Errorf("compaction point %d with auto-compaction off", got)
	}
	var none *ContextUsage
	if none.OK() || none.CompactionPoint() != 0 || none.AutocompactBuffer() != 0 {
		t.Error("nil answer")
	}
}

// The asker asks again when the model changes, once per model, and reports
// a request left unanswered as late without waiting for it.
func TestContextAsker(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	var a contextAsker
	if got := string(a.next(t0, "")); !strings.Contains(got, `"request_id":"ctx_1"`) || !strings.Contains(got, "get_context_usage") {
		t.Fatalf("first request %s", got)
	}
	answer := func(id, model string) *Event {
		return &Event{Kind: KindContextUsage, ContextUsage: &ContextUsage{RequestID: id, Model: model, MaxTokens: 1_000_000}}
	}
	initEv := func(model string) *Event { return &Event{Kind: KindInit, Init: &Init{Model: model}} }
	asst := func(model, parent string) *Event {
		return &Event{Kind: KindAssistant, Assistant: &Assistant{Model: model, ParentToolUseID: parent}}
	}
	step := func(ev *Event, at time.Time) (string, []string) {
		w, late := a.observe(ev, at)
		return string(w), late
	}
	// Before the first answer nothing is compared.
	if w, _ := step(initEv("claude-opus-4-8[1m]"), t0); w != "" {
		t.Errorf("asked before the first answer: %s", w)
	}
	if w, f := step(answer("ctx_1", "claude-opus-4-8[1m]"), t0); w != "" || f != nil {
		t.Errorf("answer: %s %v", w, f)
	}
	// The same model in another spelling, and a subagent's model, are not a change.
	for _, ev := range []*Event{initEv("claude-opus-4-8[1m]"), asst("claude-opus-4-8", ""), asst("claude-haiku-4-5", "toolu_1")} {
		if w, _ := step(ev, t0); w != "" {
			t.Errorf("asked again for %+v", ev)
		}
	}
	// A fallback shows as another model on the main thread.
	w, _ := step(asst("claude-sonnet-4-5", ""), t0)
	if !strings.Contains(w, `"ctx_2"`) {
		t.Fatalf("no request after a fallback: %q", w)
	}
	if w, _ := step(initEv("claude-sonnet-4-5"), t0); w != "" {
		t.Errorf("asked twice for one model: %s", w)
	}
	// Unanswered: reported late once the bound has passed, never before.
	if _, late := step(nil, t0.Add(contextUsageTimeout-time.Second)); late != nil {
		t.Errorf("late early: %v", late)
	}
	if _, late := step(nil, t0.Add(contextUsageTimeout)); !slices.Equal(late, []string{"ctx_2"}) {
		t.Fatalf("late %v", late)
	}
	if _, late := step(answer("ctx_2", "claude-sonnet-4-5"), t0.Add(contextUsageTimeout+time.Second)); late != nil {
		t.Errorf("late twice: %v", late)
	}
	// At most maxContextAsks requests in a session.
	for _, m := range []string{"m-a", "m-b", "m-c", "m-d", "m-e"} {
		step(answer("", ""), t0)
		step(initEv(m), t0)
	}
	if a.n != maxContextAsks {
		t.Errorf("%d requests, want at most %d", a.n, maxContextAsks)
	}
}

// A known answer for the session's CLI version and model is not asked
// again; init naming another version or model asks at once.
func TestContextAskerKnown(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	known := &KnownContext{Version: "2.1.332", Model: "claude-opus-5-5",
		Usage: ContextUsage{Model: "claude-opus-5-5", MaxTokens: 1_000_000}}
	initEv := func(version, model string) *Event {
		return &Event{Kind: KindInit, Init: &Init{Version: version, Model: model}}
	}
	tests := []struct {
		name  string
		known *KnownContext
		init  *Event
		start bool // a request before the first message
		ask   bool // a request at init
	}{
		{"nothing known", nil, initEv("2.1.332", "claude-opus-5-5"), true, false},
		{"known, same CLI and model", known, initEv("2.1.332", "claude-opus-5-5"), false, false},
		{"known, another CLI version", known, initEv("2.1.333", "claude-opus-5-5"), false, true},
		{"known, another model", known, initEv("2.1.332", "claude-sonnet-4-5"), false, true},
		{"a failed answer is not known", &KnownContext{Version: "2.1.332", Model: "claude-opus-5-5"}, initEv("2.1.332", "claude-opus-5-5"), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a contextAsker
			if got := a.start(t0, "", tt.known) != nil; got != tt.start {
				t.Errorf("request at start: %v, want %v", got, tt.start)
			}
			w, _ := a.observe(tt.init, t0)
			if got := w != nil; got != tt.ask {
				t.Errorf("request at init: %q, want one: %v", w, tt.ask)
			}
		})
	}
	// Unanswered for the timeout: an event ends the consumers' wait.
	if ev := lateEvent("ctx_1", t0); ev.Kind != KindContextUsage || ev.ContextUsage.OK() || !strings.Contains(ev.ContextUsage.Error, lateError) {
		t.Errorf("late event %+v", ev.ContextUsage)
	}
}

// Against the fake CLI: the request goes before the first user message, the
// answer arrives as an event, and a refusal or silence never fails the session.
func TestSessionContextUsage(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"answer", "refuse", ""} {
		t.Run("ctx="+mode, func(t *testing.T) {
			t.Parallel()
			spec, _ := fakeSpec(t, "tool", map[string]string{"FAKE_CLAUDE_TOOL_MS": "10", "FAKE_CLAUDE_CTX": mode})
			s := start(t, t.Context(), spec)
			evs := drain(t, s)
			if out := wait(t, s); out.Kind != OutcomeCompleted {
				t.Fatalf("outcome %s %q", out.Kind, out.Reason)
			}
			var got []*ContextUsage
			firstAssistant := -1
			ctxAt := -1
			for k, ev := range evs {
				if ev.Kind == KindContextUsage {
					got = append(got, ev.ContextUsage)
					ctxAt = k
				}
				if ev.Kind == KindAssistant && firstAssistant < 0 {
					firstAssistant = k
				}
			}
			switch mode {
			case "answer":
				if len(got) != 1 || !got[0].OK() || got[0].MaxTokens != 200_000 || got[0].CompactionPoint() != 167_000 {
					t.Fatalf("context usage %+v", got)
				}
				if ctxAt > firstAssistant {
					t.Errorf("answer at event %d, after the first response (%d)", ctxAt, firstAssistant)
				}
			case "refuse":
				if len(got) != 1 || got[0].OK() || got[0].Error == "" {
					t.Fatalf("context usage %+v", got)
				}
			case "":
				if len(got) != 0 {
					t.Fatalf("context usage %+v", got)
				}
			}
		})
	}
}
