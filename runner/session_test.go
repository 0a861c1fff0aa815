package runner

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hangGuard only turns a hung test into a failure; no test asserts timing.
const hangGuard = 2 * time.Minute

type harness struct {
	journal string
	logPath string
}

func fixturePath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeSpec runs the fake claude in the given scenario.
func fakeSpec(t *testing.T, scenario string, env map[string]string) (Spec, harness) {
	t.Helper()
	exe := fake.Path(t)
	dir := t.TempDir()
	h := harness{
		journal: filepath.Join(dir, "journal"),
		logPath: filepath.Join(dir, ".debussy", "runs", "r1", "phase-1", "session-0.jsonl"),
	}
	set := map[string]string{
		"FAKE_CLAUDE":         scenario,
		"FAKE_CLAUDE_JOURNAL": h.journal,
	}
	maps.Copy(set, env)
	return Spec{
		Bin:       exe,
		Dir:       dir,
		Prompt:    "do the thing",
		SetEnv:    set,
		LogPath:   h.logPath,
		StopGrace: 10 * time.Second,
		KillGrace: 10 * time.Second,
		Logger:    slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}, h
}

func (h harness) lines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(h.journal)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// before reports whether journal line a occurs, and before b if b occurs.
func before(lines []string, a, b string) bool {
	ia, ib := slices.Index(lines, a), slices.Index(lines, b)
	return ia >= 0 && (ib < 0 || ia < ib)
}

func start(t *testing.T, ctx context.Context, spec Spec) *Session {
	t.Helper()
	s, err := Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func drain(t *testing.T, s *Session) []Event {
	t.Helper()
	return drainWith(t, s, func(Event) {})
}

// drainWith collects the events, calling onEvent on each as it comes.
func drainWith(t *testing.T, s *Session, onEvent func(Event)) []Event {
	t.Helper()
	var evs []Event
	timeout := time.After(hangGuard)
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				return evs
			}
			evs = append(evs, ev)
			onEvent(ev)
		case <-timeout:
			t.Fatal("events channel never closed")
		}
	}
}

func wait(t *testing.T, s *Session) Outcome {
	t.Helper()
	ch := make(chan Outcome, 1)
	go func() { ch <- s.Wait() }()
	select {
	case o := <-ch:
		return o
	case <-time.After(hangGuard):
		t.Fatal("Wait did not return")
	}
	return Outcome{}
}

func markNames(o Outcome) []string {
	var names []string
	for _, m := range o.Marks {
		names = append(names, string(m.Name))
	}
	return names
}

func findMark(o Outcome, name MarkName) (Mark, bool) {
	for _, m := range o.Marks {
		if m.Name == name {
			return m, true
		}
	}
	return Mark{}, false
}

// inOrder reports whether want is a subsequence of got.
func inOrder(got, want []string) bool {
	k := 0
	for _, g := range got {
		if k < len(want) && g == want[k] {
			k++
		}
	}
	return k == len(want)
}

func kinds(evs []Event) []Kind {
	var ks []Kind
	for _, ev := range evs {
		ks = append(ks, ev.Kind)
	}
	return ks
}

func lastResult(evs []Event) *Result {
	for k := len(evs) - 1; k >= 0; k-- {
		if evs[k].Kind == KindResult {
			return evs[k].Result
		}
	}
	return nil
}

func TestSessionReplaysFixtures(t *testing.T) {
	tests := []struct {
		name      string
		fixture   string
		exit      int
		want      OutcomeKind
		reason    string
		window    int64
		assistant int
	}{
		{name: "success", fixture: "success-simple.jsonl", want: OutcomeCompleted, window: 1_000_000, assistant: 2},
		{name: "sonnet 200k", fixture: "success-sonnet-200k.jsonl", want: OutcomeCompleted, window: 200_000, assistant: 3},
		{name: "prompt too long", fixture: "prompt-too-long.jsonl", exit: 1, want: OutcomeAPIError,
			reason: "Prompt is too long (API status 400)", window: 200_000, assistant: 2},
		{name: "sigint mid tool", fixture: "multiblock-then-sigint.jsonl", want: OutcomeAPIError,
			reason: "aborted_tools", window: 1_000_000, assistant: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec, h := fakeSpec(t, "replay", map[string]string{
				"FAKE_CLAUDE_FIXTURE": fixturePath(t, tt.fixture),
				"FAKE_CLAUDE_EXIT":    strconv.Itoa(tt.exit),
			})
			s := start(t, t.Context(), spec)
			evs := drain(t, s)
			out := wait(t, s)

			if out.Kind != tt.want || !strings.Contains(out.Reason, tt.reason) {
				t.Errorf("outcome = %s %q, want %s containing %q", out.Kind, out.Reason, tt.want, tt.reason)
			}
			if out.ExitCode != tt.exit {
				t.Errorf("exit code = %d, want %d (stderr %q)", out.ExitCode, tt.exit, out.Stderr)
			}
			if out.Err != nil {
				t.Errorf("Err = %v", out.Err)
			}
			if out.Result == nil || out.Result.ModelUsage[lastModel(out.Result)].ContextWindow != tt.window {
				t.Errorf("last result %+v, want context window %d", out.Result, tt.window)
			}
			if n := countKind(evs, KindAssistant); n != tt.assistant {
				t.Errorf("assistant events = %d, want %d", n, tt.assistant)
			}
			// The session log is the raw stream, byte for byte.
			logged, err := os.ReadFile(h.logPath)
			if err != nil {
				t.Fatal(err)
			}
			fixture, _ := os.ReadFile(fixturePath(t, tt.fixture))
			if strings.TrimSpace(string(logged)) != strings.TrimSpace(string(fixture)) {
				t.Errorf("session log differs from the stream")
			}
			if len(evs) != len(strings.Split(strings.TrimSpace(string(fixture)), "\n")) {
				t.Errorf("got %d events for %s", len(evs), tt.fixture)
			}
			if !inOrder(markNames(out), []string{"stdin_closed", "exited", "group_killed"}) {
				t.Errorf("marks = %v", markNames(out))
			}
		})
	}
}

func lastModel(r *Result) string {
	for m := range r.ModelUsage {
		return m
	}
	return ""
}

func countKind(evs []Event, k Kind) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == k {
			n++
		}
	}
	return n
}

func TestSessionMultiblockSharesMessageID(t *testing.T) {
	t.Parallel()
	spec, _ := fakeSpec(t, "replay", map[string]string{"FAKE_CLAUDE_FIXTURE": fixturePath(t, "multiblock-then-sigint.jsonl")})
	s := start(t, t.Context(), spec)
	evs := drain(t, s)
	wait(t, s)
	var ids []string
	var tools []string
	for _, ev := range evs {
		if ev.Kind == KindAssistant {
			ids = append(ids, ev.Assistant.MessageID)
			for _, tu := range ev.Assistant.ToolUses {
				tools = append(tools, tu.Name)
			}
		}
	}
	want := []string{"msg_fake_0_0_1795299173771", "msg_fake_0_0_1795299173771", "msg_fake_0_0_1795299173771", "msg_fake_0_1_1795299173855"}
	if !slices.Equal(ids, want) {
		t.Errorf("message ids = %v, want %v", ids, want)
	}
	if !slices.Equal(tools, []string{"Write", "Bash", "Bash"}) {
		t.Errorf("tools = %v", tools)
	}
}

func TestSessionHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MB line")
	}
	t.Parallel()
	spec, h := fakeSpec(t, "bigline", map[string]string{"FAKE_CLAUDE_BIG_MB": "100"})
	s := start(t, t.Context(), spec)
	evs := drain(t, s)
	out := wait(t, s)
	if out.Kind != OutcomeCompleted {
		t.Errorf("outcome = %s %q", out.Kind, out.Reason)
	}
	var tu *ToolUse
	for _, ev := range evs {
		if ev.Kind == KindAssistant && len(ev.Assistant.ToolUses) == 1 {
			tu = &ev.Assistant.ToolUses[0]
			if ev.Size < 100<<20 {
				t.Errorf("event size = %d", ev.Size)
			}
		}
	}
	if tu == nil || tu.FilePath != "/home/dev/project/big.txt" || tu.Input != nil || tu.InputSize < 100<<20 {
		t.Fatalf("tool use = %+v", tu)
	}
	st, err := os.Stat(h.logPath)
	if err != nil || st.Size() < 100<<20 {
		t.Errorf("session log: %v, %d bytes", err, st.Size())
	}
}

func TestSessionSkipsNonJSONLines(t *testing.T) {
	t.Parallel()
	spec, h := fakeSpec(t, "garbage", nil)
	s := start(t, t.Context(), spec)
	evs := drain(t, s)
	out := wait(t, s)
	if got := kinds(evs); !slices.Equal(got, []Kind{KindInit, KindResult}) {
		t.Errorf("kinds = %v", got)
	}
	if out.Kind != OutcomeCompleted {
		t.Errorf("outcome = %s %q", out.Kind, out.Reason)
	}
	logged, _ := os.ReadFile(h.logPath)
	if !strings.Contains(string(logged), "this is not json\n") || !strings.Contains(string(logged), `"text":"cut her`+"\n") {
		t.Errorf("the session log must keep skipped lines:\n%s", logged)
	}
}

// Nobody reads Events until claude has finished: the runner must keep
// draining stdout or claude would block on a full pipe and Wait would hang.
func TestSessionDrainsPipeWithoutConsumer(t *testing.T) {
	t.Parallel()
	spec, _ := fakeSpec(t, "flood", map[string]string{"FAKE_CLAUDE_LINES": "2000"}) // ~20 MB
	s := start(t, t.Context(), spec)
	out := wait(t, s)
	evs := drain(t, s)
	// On a loaded machine the 2000 lines can take longer than the CLI has
	// to answer get_context_usage (the flood never does): the session then
	// adds the late-answer event. The stream's own events must all arrive.
	n := 0
	for _, e := range evs {
		if e.Kind != KindContextUsage {
			n++
		}
	}
	if out.Kind != OutcomeCompleted || n != 2002 {
		t.Errorf("outcome = %s, %d events of the stream (of %d)", out.Kind, n, len(evs))
	}
}

func TestSessionArgsEnvDir(t *testing.T) {
	t.Parallel()
	spec, h := fakeSpec(t, "env", map[string]string{
		"FAKE_CLAUDE_FIXTURE": fixturePath(t, "success-simple.jsonl"),
		"DEBUSSY_RUN_ID":      "r1",
	})
	spec.Model = "claude-sonnet-4-5"
	spec.PermissionMode = "bypassPermissions"
	spec.ExtraArgs = []string{"--max-turns", "5"}
	spec.Env = []string{"PATH=/usr/bin:/bin", "CLAUDECODE=1", "KEEP=1", "DEBUSSY_RUN_ID=stale"}
	spec.PathPrepend = "/opt/debussy/bin"
	s := start(t, t.Context(), spec)
	drain(t, s)
	wait(t, s)
	j := h.lines(t)
	for _, want := range []string{
		"args -p --input-format stream-json --output-format stream-json --verbose --model claude-sonnet-4-5 --dangerously-skip-permissions --settings {\"idleCompaction\":false} --max-turns 5",
		"cwd " + spec.Dir,
		"env PATH=/opt/debussy/bin:/usr/bin:/bin",
		"env KEEP=1",
		"env DEBUSSY_RUN_ID=r1",
	} {
		if !slices.Contains(j, want) {
			t.Errorf("journal lacks %q:\n%s", want, strings.Join(j, "\n"))
		}
	}
	for _, l := range j {
		if strings.HasPrefix(l, "env CLAUDECODE") || l == "env DEBUSSY_RUN_ID=stale" {
			t.Errorf("journal has %q", l)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		result *Result
		want   OutcomeKind
		reason string
	}{
		{"no result", nil, OutcomeCrashed, "claude exited with code 1 without a result"},
		{"success", &Result{Subtype: "success"}, OutcomeCompleted, ""},
		{"prompt too long", &Result{Subtype: "success", IsError: true, APIErrorStatus: 400, Text: "Prompt is too long", TerminalReason: "prompt_too_long"},
			OutcomeAPIError, "Prompt is too long (API status 400), terminal reason prompt_too_long"},
		{"max turns", &Result{Subtype: "error_max_turns", IsError: true, NumTurns: 5}, OutcomeMaxTurns, "claude stopped at the turn limit after 5 turns"},
		{"aborted", &Result{Subtype: "error_during_execution", IsError: true}, OutcomeAPIError, "error_during_execution"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, reason := classify(tt.result, "exited with code 1")
			if kind != tt.want || reason != tt.reason {
				t.Errorf("classify = %s %q, want %s %q", kind, reason, tt.want, tt.reason)
			}
		})
	}
}
