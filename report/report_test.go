package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/debussy-dev/debussy/internal/golden"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// demoInput is what the demo's run (make demo) recorded, kept under
// testdata/demo: its ledger, events, session streams, signals and commits.
func demoInput(t *testing.T) Input {
	t.Helper()
	dir := filepath.Join("testdata", "demo")
	l, err := state.New(dir).Load()
	if err != nil {
		t.Fatal(err)
	}
	run := l.Runs[0]
	events, err := state.ReadLog(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Run: run, PlanName: "Greeter - Master Plan", Events: events, Sessions: map[SessionKey]*Digest{},
		Signals: map[string]*state.Signal{}, Threshold: 80}
	for _, p := range run.Phases {
		for n := 1; n <= p.Sessions; n++ {
			d := NewDigest(0, nil)
			f, err := os.Open(filepath.Join(dir, "phase-"+p.ID, "session-"+itoa(n)+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			rd := bufio.NewReader(f)
			for {
				line, err := rd.ReadBytes('\n')
				if len(bytes.TrimSpace(line)) > 0 {
					d.Line(line)
				}
				if err != nil {
					break
				}
			}
			f.Close()
			in.Sessions[SessionKey{p.ID, n}] = d
		}
		var sig state.Signal
		readJSON(t, filepath.Join(dir, "signals", p.ID+".json"), &sig)
		in.Signals[p.ID] = &sig
	}
	readJSON(t, filepath.Join(dir, "commits.json"), &in.Commits)
	return in
}

func itoa(n int) string { return string(rune('0' + n)) }

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, Build(demoInput(t))); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "demo.md"), b.Bytes())
}

// The demo's first session: warned at 70 %, asked for its handoff at 80 %,
// a tool refused meanwhile, the handoff written and the session stopped;
// its commit holds the files it wrote; the gates ran after session 2.
func TestBuildDemo(t *testing.T) {
	r := Build(demoInput(t))
	if len(r.Phases) != 2 || r.Threshold != 80 {
		t.Fatalf("phases %d, threshold %d", len(r.Phases), r.Threshold)
	}
	p := r.Phases[0]
	if len(p.Sessions) != 2 || p.Restarts != 1 {
		t.Fatalf("phase 1: %d sessions, %d restarts", len(p.Sessions), p.Restarts)
	}
	s := p.Sessions[0]
	var got []string
	for _, m := range s.Marks {
		got = append(got, string(m.Kind)+"@"+itoa(m.Turn))
	}
	want := []string{"warning@3", "threshold@4", "handoff_requested@4", "refusal@4", "handoff_written@5", "stop@5"}
	if !slices.Equal(got, want) {
		t.Errorf("session 1 marks %v, want %v", got, want)
	}
	if s.Peak() < 80 || len(s.Points) != 5 {
		t.Errorf("session 1: %d points, peak %.1f", len(s.Points), s.Peak())
	}
	if len(s.Commits) != 1 || len(s.Commits[0].Changes) != 2 || s.Commits[0].Changes[1].Path != "greet.sh" {
		t.Errorf("session 1 commits %+v", s.Commits)
	}
	if len(p.Gates) != 2 || p.Gates[0].AfterSession != 2 || !p.Gates[0].Passed {
		t.Errorf("phase 1 gates %+v", p.Gates)
	}
	if m := p.Sessions[1].Marks; len(m) != 1 || m[0].Kind != KindDone || !strings.Contains(m[0].Text, "completed") {
		t.Errorf("session 2 marks %+v", m)
	}
	if sp := r.Spend; sp.Tokens.Processed() == 0 || sp.Cost <= 0 || sp.Tokens.CacheRead == 0 {
		t.Errorf("run spend %+v", sp)
	}
	var sum float64
	for _, c := range s.Spend.CostByKind {
		sum += c
	}
	if d := sum - s.Spend.Cost; d > 1e-9 || d < -1e-9 {
		t.Errorf("cost by kind sums to %v, cost %v", sum, s.Spend.Cost)
	}
}

// The HTML parses as well-formed markup (every element closed in order),
// has the charts, and is self-contained: no script, no stylesheet or
// image fetched, no link off the page.
func TestHTMLSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, Build(demoInput(t))); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "ZgotmplZ") {
		t.Error("html/template refused a value (ZgotmplZ in the output)")
	}
	void := map[string]bool{"meta": true, "br": true, "img": true, "input": true, "link": true, "hr": true}
	var stack []string
	svgs := 0
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		tok := z.Token()
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			switch tok.Data {
			case "script", "iframe", "object", "embed", "link", "img":
				t.Errorf("<%s> in a self-contained report", tok.Data)
			case "svg":
				svgs++
			}
			for _, a := range tok.Attr {
				v := strings.ToLower(strings.TrimSpace(a.Val))
				if (a.Key == "src" || a.Key == "href" || a.Key == "xlink:href") && !strings.HasPrefix(v, "#") {
					t.Errorf("<%s %s=%q> points off the page", tok.Data, a.Key, a.Val)
				}
				if strings.HasPrefix(a.Key, "on") {
					t.Errorf("<%s %s> is script", tok.Data, a.Key)
				}
				if strings.Contains(v, "url(") {
					t.Errorf("<%s %s=%q> fetches", tok.Data, a.Key, a.Val)
				}
			}
			if tt == html.StartTagToken && !void[tok.Data] {
				stack = append(stack, tok.Data)
			}
		case html.EndTagToken:
			if len(stack) == 0 || stack[len(stack)-1] != tok.Data {
				t.Fatalf("</%s> closes %v", tok.Data, stack)
			}
			stack = stack[:len(stack)-1]
		case html.TextToken:
			if strings.Contains(tok.Data, "@import") || strings.Contains(tok.Data, "url(") {
				t.Errorf("the page's text fetches: %q", tok.Data)
			}
		}
	}
	if len(stack) != 0 {
		t.Errorf("unclosed elements: %v", stack)
	}
	// timelines, context curves, tokens, cost, tools: 5 per phase, plus
	// the run's tokens and cost.
	if want := 2*5 + 2; svgs != want {
		t.Errorf("%d charts, want %d", svgs, want)
	}
	doc, err := html.Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if doc.FirstChild == nil {
		t.Fatal("empty document")
	}
	for _, want := range []string{"debussy run 20261124-0322-4626", "handoff requested", "threshold 80 %", "A greet.sh", "after session 2: greet: passed"} {
		if !strings.Contains(html.UnescapeString(out), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// Older runs have no turn on their events: a refusal finds its turn by its
// tool_use id, a handoff by its path, anything else goes to the last turn.
func TestMarkTurnWithoutTurnField(t *testing.T) {
	in := demoInput(t)
	var evs []record.Line
	for _, l := range in.Events {
		var m map[string]any
		if err := l.Decode(&m); err != nil {
			t.Fatal(err)
		}
		delete(m, "turn")
		evs = append(evs, lineOf(t, m))
	}
	in.Events = evs
	s := Build(in).Phases[0].Sessions[0]
	at := map[Kind]int{}
	for _, m := range s.Marks {
		at[m.Kind] = m.Turn
	}
	if at[KindRefusal] != 4 || at[KindWarning] != 5 {
		t.Errorf("marks without turns: %v", at)
	}
}

func TestRunsDone(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want bool
	}{
		{"debussy done --phase 1", true},
		{"echo ok > ok.txt && debussy done --phase 2", true},
		{"/tmp/x/debussy done --phase 2 --status failed --reason 'no'", true},
		{"debussy progress --phase 1 'next: debussy done'", false},
		{"cat > h.md <<'EOF'\n## Resume\nthen run debussy done --phase 1\nEOF", false},
		{"debussy doner", false},
		{"echo debussy-done", false},
	} {
		if got := runsDone(tc.cmd); got != tc.want {
			t.Errorf("runsDone(%q) = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

// A CI job of the matrix runs one phase (--only): the others, pending in
// its run, are neither drawn nor given an empty gantt section.
func TestChartsOnlyPhasesThatRan(t *testing.T) {
	in := demoInput(t)
	p2 := *in.Run.Phases[1]
	p2.Status, p2.Sessions, p2.Commits = state.StatusPending, 0, nil
	run := *in.Run
	run.Phases = []*state.PhaseRecord{in.Run.Phases[0], &p2}
	in.Run = &run
	var b strings.Builder
	Charts(&b, Build(in))
	out := b.String()
	if strings.Contains(out, "phase 2") || strings.Contains(out, "Phase 2") || !strings.Contains(out, "section phase 1") {
		t.Errorf("charts of a run that ran phase 1 only:\n%s", out)
	}
	if n := strings.Count(out, "```mermaid"); n != 2 {
		t.Errorf("%d mermaid blocks, want the gantt and phase 1's context", n)
	}
}

// Since the policy package, `debussy done` is an event of its own: it
// marks the turn once, in place of the stream's Bash call.
func TestDoneSignalEvent(t *testing.T) {
	in := demoInput(t)
	in.Events = append(in.Events, lineOf(t, map[string]any{"ts": "2026-11-24T03:23:05Z", "event": "done_signal", "phase": "1", "session": 2, "turn": 3}))
	m := Build(in).Phases[0].Sessions[1].Marks
	if len(m) != 1 || m[0].Kind != KindDone || m[0].Turn != 3 || m[0].Text != "the agent ran debussy done (completed)" {
		t.Errorf("session 2 marks %+v", m)
	}
}

// A usage limit and a fallback model are notes of the phase: the report
// says the phase waited or why the run ended, and which model went on.
func TestUsageLimitNotes(t *testing.T) {
	in := demoInput(t)
	in.Events = append(in.Events,
		lineOf(t, map[string]any{"ts": "2026-11-24T03:23:05Z", "event": "usage_limit", "phase": "1", "limit": "five_hour", "resets": "2026-11-24T05:00:00Z", "waiting": true}),
		lineOf(t, map[string]any{"ts": "2026-11-24T03:23:06Z", "event": "fallback_model", "phase": "1", "limit": "seven_day_opus", "from": "opus", "to": "sonnet"}))
	notes := strings.Join(Build(in).Phases[0].Notes, "\n")
	for _, want := range []string{"usage limit (five_hour) reached; resets 2026-11-24T05:00:00Z; waited for it", "went on with fallback_model sonnet instead of opus"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// A parallel phase's merge is a note of the phase, read from the line as
// the orchestrator writes it (its files a count).
func TestMergeNote(t *testing.T) {
	in := demoInput(t)
	in.Events = append(in.Events,
		lineOf(t, map[string]any{"ts": "2026-11-24T03:23:05Z", "event": "merge", "phase": "1", "branch": "debussy/p/1", "commit": "1111111aaaa", "files": 3}))
	notes := strings.Join(Build(in).Phases[0].Notes, "\n")
	if want := "merged into your branch at 1111111"; !strings.Contains(notes, want) {
		t.Errorf("notes lack %q:\n%s", want, notes)
	}
}

// The phases a run did not start (skipped as done, or pending) are listed
// with their state in the report's table, and drawn nowhere.
func TestReportListsPhasesNotRun(t *testing.T) {
	in := demoInput(t)
	p2 := *in.Run.Phases[1]
	p2.Status, p2.Sessions, p2.Commits, p2.LastError = state.StatusPending, 0, nil, ""
	run := *in.Run
	run.Phases = []*state.PhaseRecord{in.Run.Phases[0], &p2, {ID: "0", Title: "Setup", Status: state.StatusSkipped}}
	in.Run = &run
	r := Build(in)
	var md strings.Builder
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 2 | " + mdText(p2.Title) + " | pending (not run) |", "| 0 | Setup | skipped (not run) |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	var page bytes.Buffer
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "Setup</td><td><span class=\"status skipped\">skipped</span> <span class=\"muted\">(not run)</span>") {
		t.Errorf("the HTML table does not list the skipped phase")
	}
	var charts strings.Builder
	Charts(&charts, r)
	if strings.Contains(charts.String(), "phase 0") || strings.Contains(charts.String(), "phase 2") {
		t.Errorf("charts draw phases that did not run:\n%s", charts.String())
	}
}

// An unchecked gate (no command) was not run: the gantt draws it neither
// as passed nor as a failure.
func TestGanttUncheckedGateNotRun(t *testing.T) {
	r := Build(demoInput(t))
	end := r.Phases[0].Sessions[0].End
	r.Phases[0].Gates = append(r.Phases[0].Gates, Gate{Name: "i18n", Unchecked: true, End: end, AfterSession: 1})
	var b strings.Builder
	Charts(&b, r)
	var line string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "gate i18n") {
			line = l
		}
	}
	if !strings.Contains(line, "gate i18n (unchecked, not run) :2") || strings.Contains(line, "crit") || strings.Contains(line, "done") {
		t.Errorf("the unchecked gate's gantt line: %q", line)
	}
}

// Whoever renders a report gets it redacted: Build judges each text whole,
// before HTML or markdown escaping could hide a shape.
func TestBuildRedacts(t *testing.T) {
	const key = "sk-ant-api03-SECRETSECRETSECRET"
	in := demoInput(t)
	p := *in.Run.Phases[0]
	p.LastError = "gate test exit 1: ANTHROPIC_API_KEY=" + key
	run := *in.Run
	run.Phases = append([]*state.PhaseRecord{&p}, in.Run.Phases[1:]...)
	in.Run = &run
	r := Build(in)
	var page, md bytes.Buffer
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Phases[0].Error, key) || strings.Contains(page.String(), key) || strings.Contains(md.String(), key) {
		t.Errorf("the key survives in the report: %q", r.Phases[0].Error)
	}
}

// lineOf is m as a line of events.jsonl.
func lineOf(t *testing.T, m map[string]any) record.Line {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	l, err := record.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The tuning section: one bar per candidate, the current in bold and
// marked, the recommendation starred; left out without a tuning.
func TestTuningChart(t *testing.T) {
	in := demoInput(t)
	var plain bytes.Buffer
	if err := HTML(&plain, Build(in)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "Tuning:") {
		t.Errorf("a tuning section without a tuning")
	}
	in.Tuning = &Tuning{Evidence: "3 sessions of run r", SelfCheck: "exact", Recommended: "Recommended: 60 %",
		Rows: []TuningRow{
			{Threshold: 80, Cap: 400_000, MaxRestarts: 3, CostByKind: [4]float64{0.1, 1, 0.5, 0.2}, Cost: 1.8, Restarts: 1, Peak: 170_000, Current: true},
			{Threshold: 60, Cap: 400_000, MaxRestarts: 3, CostByKind: [4]float64{0.1, 0.7, 0.6, 0.2}, Cost: 1.6, Restarts: 2, Peak: 125_000, Recommended: true},
		}}
	var b bytes.Buffer
	if err := HTML(&b, Build(in)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"Tuning: this run", `aria-label="modelled cost per candidate setting"`, "$1.80 · 1 restart · peak 170K (now)",
		"* 60 % · cap 400K", "$1.60 · 2 restarts · peak 125K", "Recommended: 60 %"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
