package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// With stdout piped and CI=true the run's output carries structure, not
// text: strings of no known shape under neutral names — typed by the agent,
// printed by its tools, in a tool's input, printed by a failing gate — reach
// neither debussy's stdout and stderr nor the bundle `debussy export`
// writes, while the tools' names and sizes and the gate's name and exit
// code do. The raw stream keeps them, in .debussy/ (issue 53).
func TestCILogAndExportCarryNoText(t *testing.T) {
	claudetest.OncePerSuite(t, "what a CI log and the export carry")
	s := noShape(53, 1)
	tool, typed, input, gated := []string{s(14), s(22)}, []string{s(12), s(18)}, s(16), []string{s(16), s(26)}
	out, gateOut := freeTextFiles(t, tool, gated)
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Text("Looking at ticket "+typed[0]+" first."), fakeapi.Bash("cat "+out)),
			turn(21000, fakeapi.Bash("echo "+input+" > note.txt && debussy done --phase 1")),
			turn(22000, fakeapi.Text("Done; the reference was "+typed[1]+".")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Leaky", Gates: []string{"check: `cat " + gateOut + "; exit 1`"}}},
		"model: claude-sonnet-4-5\nmax_retries: 0\n")
	h.Env = append(h.Env, "CI=true")
	res := h.run("run", "plan/MASTER_PLAN.md")
	if res.Code != 1 {
		t.Fatalf("want exit 1 (the gate fails): %s", res)
	}
	if raw := h.runFiles("phase-1/session-1.jsonl"); !strings.Contains(raw, tool[0]) || !strings.Contains(raw, typed[0]) {
		t.Fatal("the raw session stream lacks what was planted: nothing flowed")
	}
	bundle := filepath.Join(t.TempDir(), "bundle")
	exp := h.run("export", "-o", bundle)
	if exp.Code != 0 {
		t.Fatalf("debussy export: %s", exp)
	}
	places := map[string]string{"stdout": res.Stdout, "stderr": res.Stderr, "export's stdout": exp.Stdout}
	files, err := os.ReadDir(bundle)
	if err != nil || len(files) < 4 {
		t.Fatalf("the bundle: %v, %d files", err, len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(bundle, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		places["export/"+f.Name()] = string(data)
	}
	planted := append(append(append(append([]string{input}, tool...), typed...), gated...), gateOut, "mismatch near", "cat ")
	for where, text := range places {
		for _, v := range planted {
			if strings.Contains(text, v) {
				t.Errorf("%s carries %q", where, v)
			}
		}
	}
	for _, want := range []string{"name=Bash", "size=", "tool ended", "exit=ok", `gate=check`, `gate 1 "check" failed (exit 1)`} {
		if !strings.Contains(res.Stderr+res.Stdout, want) {
			t.Errorf("the CI log lacks %q:\n%s%s", want, res.Stdout, res.Stderr)
		}
	}
	if !strings.Contains(places["export/events.jsonl"], `"gate":"check"`) || !strings.Contains(places["export/report.md"], "Leaky") {
		t.Errorf("the bundle lacks the run's structure:\n%s", places["export/events.jsonl"])
	}
}
