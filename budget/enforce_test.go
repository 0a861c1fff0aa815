package budget

import (
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/runner"
)

func TestLevelOf(t *testing.T) {
	tests := []struct {
		used float64
		want Level
	}{
		{0, LevelNone}, {0.6999, LevelNone}, {0.70, LevelNote}, {0.8999, LevelNote},
		{0.90, LevelFirm}, {0.95, LevelFirm}, {0.9501, LevelWrapUp}, {0.9999, LevelWrapUp},
		{1, LevelExhausted}, {3, LevelExhausted},
	}
	for _, tt := range tests {
		if got := LevelOf(tt.used); got != tt.want {
			t.Errorf("LevelOf(%v) = %v, want %v", tt.used, got, tt.want)
		}
	}
}

func TestModeAction(t *testing.T) {
	all := []Level{LevelNone, LevelNote, LevelFirm, LevelWrapUp, LevelExhausted}
	tests := []struct {
		mode Mode
		want []Action // per level in all's order
	}{
		{Strict, []Action{{}, {Note: true}, {Note: true, RefuseExploratory: true},
			{Note: true, RefuseExploratory: true, WrapUpOnly: true},
			{Note: true, RefuseExploratory: true, WrapUpOnly: true, Stop: true}}},
		{Advisory, []Action{{}, {Note: true}, {Note: true}, {Note: true}, {Note: true}}},
		{Soft, []Action{{}, {}, {}, {}, {}}},
		{Adaptive, []Action{{}, {Note: true}, {Note: true}, {Note: true}, {Note: true, Stop: true}}},
		{"bogus", []Action{{}, {Note: true}, {Note: true, RefuseExploratory: true},
			{Note: true, RefuseExploratory: true, WrapUpOnly: true},
			{Note: true, RefuseExploratory: true, WrapUpOnly: true, Stop: true}}},
	}
	for _, tt := range tests {
		for i, l := range all {
			if got := tt.mode.Action(l); got != tt.want[i] {
				t.Errorf("%s at %s = %+v, want %+v", tt.mode, l, got, tt.want[i])
			}
		}
	}
}

func TestLimitsUsed(t *testing.T) {
	tests := []struct {
		name   string
		limits Limits
		spend  Spend
		frac   float64
		dim    Dimension
		desc   string
		left   string
	}{
		{"none", Limits{}, Spend{Tokens: 5}, 0, "", "no budget", "no limit"},
		{"tokens", Limits{Tokens: 100_000}, Spend{Tokens: 75_000}, 0.75, DimTokens, "tokens 75K of 100K", "25K tokens"},
		{"cost fuller than tokens", Limits{Tokens: 100_000, CostUSD: 2}, Spend{Tokens: 50_000, CostUSD: 1.9}, 0.95, DimCost, "cost $1.90 of $2.00", "$0.10"},
		{"duration", Limits{Duration: time.Hour, CostUSD: 10}, Spend{Duration: 90 * time.Minute, CostUSD: 1}, 1.5, DimDuration, "time 1h30m0s of 1h0m0s", "0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frac, dim := tt.limits.Used(tt.spend)
			if !near(frac, tt.frac, 1e-9) || dim != tt.dim {
				t.Errorf("Used = %v %q, want %v %q", frac, dim, tt.frac, tt.dim)
			}
			if got := tt.limits.Describe(tt.spend, dim); got != tt.desc {
				t.Errorf("Describe = %q, want %q", got, tt.desc)
			}
			if got := tt.limits.Remaining(tt.spend, dim); got != tt.left {
				t.Errorf("Remaining = %q, want %q", got, tt.left)
			}
		})
	}
}

func TestCompletionProbability(t *testing.T) {
	tests := []struct {
		name        string
		used        float64
		done, total int
		want        float64
	}{
		{"no tasks known", 0.5, 0, 0, 1},
		{"all done", 0.9, 4, 4, 1},
		{"nothing spent", 0, 0, 4, 1},
		{"nothing done", 0.25, 0, 4, 0},
		{"on pace", 0.5, 2, 4, 1},
		// A quarter of the tasks for half the budget: the rest needs 1.5,
		// 0.5 remains.
		{"behind", 0.5, 1, 4, 1.0 / 3},
		{"ahead", 0.25, 2, 4, 1},
		{"budget gone, tasks left", 1, 3, 4, 0},
		{"over budget", 1.2, 3, 4, 0},
	}
	for _, tt := range tests {
		if got := CompletionProbability(tt.used, tt.done, tt.total); !near(got, tt.want, 1e-9) {
			t.Errorf("%s: CompletionProbability(%v, %d, %d) = %v, want %v", tt.name, tt.used, tt.done, tt.total, got, tt.want)
		}
	}
}

func TestQuarters(t *testing.T) {
	cfg := AdaptiveConfig{RestartThreshold: 0.9, MinCompletionProbability: 0.5}
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name        string
		used        float64
		evaluated   int
		done, total int
		quarter     int
		want        Quarter
	}{
		{"below the first quarter", 0.2, 0, 0, 4, 0, Quarter{}},
		{"first quarter, nothing done: low but below the threshold", 0.25, 0, 0, 4, 1,
			Quarter{At: at, UsedPct: 25, TasksDone: 0, TasksTotal: 4, Probability: 0, Decision: Continue}},
		{"already evaluated", 0.3, 1, 1, 4, 0, Quarter{}},
		{"jump to the third quarter", 0.8, 1, 2, 4, 3,
			Quarter{At: at, UsedPct: 80, TasksDone: 2, TasksTotal: 4, Probability: 0.25, Decision: Continue}},
		{"last quarter, tasks lag: restart", 1.0, 3, 2, 4, 4,
			Quarter{At: at, UsedPct: 100, TasksDone: 2, TasksTotal: 4, Probability: 0, Decision: Restart}},
		{"last quarter, all done", 1.01, 3, 4, 4, 4,
			Quarter{At: at, UsedPct: 101, TasksDone: 4, TasksTotal: 4, Probability: 1, Decision: Continue}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := QuarterDue(tt.used, tt.evaluated)
			if q != tt.quarter {
				t.Fatalf("QuarterDue = %d, want %d", q, tt.quarter)
			}
			if q == 0 {
				return
			}
			if got := cfg.Evaluate(at, tt.used, tt.done, tt.total); got != tt.want {
				t.Errorf("Evaluate = %+v, want %+v", got, tt.want)
			}
		})
	}
	// A lower threshold lets an earlier quarter restart.
	low := AdaptiveConfig{RestartThreshold: 0.5, MinCompletionProbability: 0.5}
	if got := low.Evaluate(at, 0.5, 1, 4); got.Decision != Restart || got.Probability != 0.333 {
		t.Errorf("threshold 0.5 at half with a quarter done = %+v", got)
	}
}

func TestClassifier(t *testing.T) {
	type call struct{ name, cmd string }
	tests := []struct {
		name  string
		calls []call
		want  []Progress
	}{
		{"the usual arc",
			[]call{{"Read", ""}, {"Grep", ""}, {"TodoWrite", ""}, {"Write", ""}, {"Read", ""}, {"Bash", "go test ./..."}, {"Edit", ""}, {"Bash", "cd x && make test"}},
			[]Progress{Exploring, Exploring, Planning, Acting, Acting, Verifying, Acting, Verifying}},
		{"tests before any edit are exploring",
			[]call{{"Bash", "go test ./..."}, {"Bash", "git log --oneline | head"}},
			[]Progress{Exploring, Exploring}},
		{"a shell that writes is acting",
			[]call{{"Bash", "ls"}, {"Bash", "echo hi > f.txt"}, {"Bash", "sed -i s/a/b/ f"}},
			[]Progress{Exploring, Acting, Acting}},
		{"unknown tools change nothing",
			[]call{{"Glob", ""}, {"mcp__x__y", ""}},
			[]Progress{Exploring, Exploring}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Classifier
			for i, cl := range tt.calls {
				if got := c.Tool(cl.name, cl.cmd); got != tt.want[i] {
					t.Errorf("after %v: %q, want %q", cl, got, tt.want[i])
				}
			}
		})
	}
}

func TestClassifierPlanText(t *testing.T) {
	var c Classifier
	say := func(text string) Progress {
		return c.Observe(runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{Text: text}})
	}
	if got := say("Let me look around."); got != "" {
		t.Errorf("chatter = %q", got)
	}
	if got := say("Steps:\n1. read\n2. write\n3. test"); got != Planning {
		t.Errorf("numbered steps = %q", got)
	}
	c.Tool("Edit", "")
	if got := say("## Plan\nmore"); got != Acting {
		t.Errorf("plan text after an edit = %q", got)
	}
}

func TestToolKind(t *testing.T) {
	tests := []struct {
		name, cmd string
		want      Kind
	}{
		{"Read", "", KindRead},
		{"Task", "", KindRead},
		{"Bash", "git status && git diff", KindRead},
		{"Bash", "git commit -m x", KindWrite},
		{"Bash", "cat a | grep b | wc -l", KindRead},
		{"Bash", "cat $(ls)", KindWrite},
		{"Bash", "go vet ./...", KindVerify},
		{"Bash", "npm run build", KindVerify},
		{"Bash", "rm -rf build", KindWrite},
		{"TodoWrite", "", KindPlan},
		{"NotebookEdit", "", KindWrite},
		{"Skill", "", KindOther},
	}
	for _, tt := range tests {
		if got := ToolKind(tt.name, tt.cmd); got != tt.want {
			t.Errorf("ToolKind(%s, %q) = %v, want %v", tt.name, tt.cmd, got, tt.want)
		}
	}
}

func TestNote(t *testing.T) {
	if Note(LevelNone, "x") != "" {
		t.Error("a note below 70 %")
	}
	for _, l := range []Level{LevelNote, LevelFirm, LevelWrapUp} {
		if n := Note(l, "12K tokens"); n == "" || !strings.Contains(n, "12K tokens") {
			t.Errorf("Note(%s) = %q", l, n)
		}
	}
}

// Only strict's notes speak of refusals, only a stopping mode's of the stop.
func TestModeNote(t *testing.T) {
	tests := []struct {
		mode    Mode
		level   Level
		want    string
		notWant string
	}{
		{Strict, LevelFirm, "are refused from now", ""},
		{Strict, LevelWrapUp, "every other tool is refused", ""},
		{Strict, LevelExhausted, "the session stops", ""},
		{Advisory, LevelNote, "12K tokens left", ""},
		{Advisory, LevelFirm, "12K tokens left", "refused"},
		{Advisory, LevelWrapUp, "Wrap up now", "refused"},
		{Advisory, LevelExhausted, "used all of its budget", "stops"},
		{Adaptive, LevelWrapUp, "Wrap up now", "refused"},
		{Adaptive, LevelExhausted, "the session stops", ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode)+"/"+tt.level.String(), func(t *testing.T) {
			n := tt.mode.Note(tt.level, "12K tokens")
			if !strings.Contains(n, tt.want) || (tt.notWant != "" && strings.Contains(n, tt.notWant)) {
				t.Errorf("Note = %q, want %q and not %q", n, tt.want, tt.notWant)
			}
		})
	}
}
