package fakeapi_test

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// The two real shapes load, and their main-thread calls and peaks are the
// ones their stats block publishes (09's peak of 64,517 is its closing
// text-only turn; its last turn with a call is at 63,872).
func TestLoadRealShapes(t *testing.T) {
	for _, tt := range []struct {
		file        string
		calls       int
		peak        int64
		repeats     int
		repeatsSame int
	}{
		{"09-privacy-x402.json", 32, 63872, 0, 0},
		{"13-speakfree-vscode.json", 74, 99486, 1, 0},
	} {
		t.Run(tt.file, func(t *testing.T) {
			s, err := fakeapi.LoadShape(filepath.Join("testdata", "shapes", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			for _, turn := range s.Main() {
				calls += len(turn.Tools)
			}
			if calls != tt.calls || s.Peak() != tt.peak {
				t.Errorf("%d main-thread calls, peak %d; want %d, %d", calls, s.Peak(), tt.calls, tt.peak)
			}
			rep, same := repeats(s)
			if rep != tt.repeats || same != tt.repeatsSame {
				t.Errorf("%d exact repeats (%d same result), want %d (%d)", rep, same, tt.repeats, tt.repeatsSame)
			}
		})
	}
}

// repeats counts exact repeats (same tool and input as an earlier call)
// and those among them whose normalized result was the same as the last.
func repeats(s fakeapi.Shape) (n, same int) {
	last := map[string]string{}
	for _, turn := range s.Main() {
		for _, c := range turn.Tools {
			var v any
			_ = json.Unmarshal(c.Input, &v)
			in, _ := json.Marshal(v)
			key := c.Name + string(in)
			if prev, ok := last[key]; ok {
				n++
				if prev == c.ResultNormSHA1 {
					same++
				}
			}
			last[key] = c.ResultNormSHA1
		}
	}
	return n, same
}

// Generated shapes are the same for the same seed and follow the
// published statistics over many seeds.
func TestGenerateFollowsStatistics(t *testing.T) {
	if a, b := fakeapi.Generate(7, 0), fakeapi.Generate(7, 0); !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave two shapes")
	}
	if a, b := fakeapi.Generate(7, 50), fakeapi.Generate(8, 50); reflect.DeepEqual(a, b) {
		t.Fatal("two seeds gave the same shape")
	}
	var deltas []int64
	calls, reps, same := 0, 0, 0
	for seed := range uint64(60) {
		s := fakeapi.Generate(seed, 0)
		main := s.Main()
		if len(main) < 30 || len(main) > 300 {
			t.Fatalf("seed %d: %d calls, want 30–300", seed, len(main))
		}
		if first := main[0].Usage.Context(); first < 15000 || first > 41000 {
			t.Errorf("seed %d: first turn at %d, want 15K–41K", seed, first)
		}
		for i := 1; i < len(main); i++ {
			deltas = append(deltas, main[i].Usage.Context()-main[i-1].Usage.Context())
		}
		calls += len(main)
		r, sm := repeats(s)
		reps, same = reps+r, same+sm
	}
	slices.Sort(deltas)
	q := func(p float64) int64 { return deltas[int(p*float64(len(deltas)-1))] }
	for _, c := range []struct {
		p    float64
		want int64
	}{{0.25, 349}, {0.5, 632}, {0.75, 1283}, {0.9, 2518}} {
		if got := q(c.p); got < c.want*85/100 || got > c.want*115/100 {
			t.Errorf("p%.0f of tokens per call %d, want about %d", c.p*100, got, c.want)
		}
	}
	rate := float64(reps) / float64(calls)
	t.Logf("%d calls, %d repeats (%.1f %%), %d with the same result", calls, reps, rate*100, same)
	if rate < 0.02 || rate > 0.045 || same*3 > reps {
		t.Errorf("repeats %.1f %% (want about 3.3 %%), %d of %d with the same result (want few)", rate*100, same, reps)
	}
}

// Scale puts the peak exactly where asked and keeps the shape's form.
func TestScale(t *testing.T) {
	s := fakeapi.Generate(3, 40)
	for _, peak := range []int64{20000, 170000, 999999} {
		got := s.Scale(peak)
		if got.Peak() != peak {
			t.Errorf("Scale(%d).Peak() = %d", peak, got.Peak())
		}
		if len(got.Main()) != len(s.Main()) {
			t.Errorf("Scale changed the turns")
		}
	}
}

// A replayed call keeps its identity, its kind and whether its result
// changed: the files the server writes before each turn say so.
func TestReplayKeepsIdentityAndChange(t *testing.T) {
	call := func(name, input, norm string) fakeapi.ShapeCall {
		return fakeapi.ShapeCall{Name: name, Input: json.RawMessage(input), ResultNormSHA1: norm, ResultSHA1: norm + "1"}
	}
	u := fakeapi.Usage{Input: 10, CacheRead: 1000}
	shape := fakeapi.Shape{Turns: []fakeapi.ShapeTurn{
		{Usage: u, Tools: []fakeapi.ShapeCall{call("Bash", `{"command":"go test ./..."}`, "aa")}},
		{Usage: u, Tools: []fakeapi.ShapeCall{call("Edit", `{"file_path":"/x.go","old_string":"a","new_string":"b"}`, "bb")}},
		{Usage: u, Tools: []fakeapi.ShapeCall{call("Bash", `{"command":"go test ./..."}`, "cc")}}, // re-run after the fix
		{Usage: u, Tools: []fakeapi.ShapeCall{call("Bash", `{"command":"go test ./..."}`, "cc")}}, // the same result
		{Usage: u, Tools: []fakeapi.ShapeCall{call("Read", `{"file_path":"/x.go"}`, "dd")}},
		{Usage: u, Tools: []fakeapi.ShapeCall{call("Grep", `{"path":"/","pattern":"x"}`, "ee")}},
		{Usage: u, Tools: []fakeapi.ShapeCall{call("Task", `{"prompt":"go"}`, "ff")}},
		{Usage: u, Sidechain: true, Tools: []fakeapi.ShapeCall{call("Read", `{"file_path":"/y.go"}`, "11")}},
		{Usage: u}, // text only
	}}
	c := fakeapi.Replay(shape, fakeapi.ReplayOptions{Name: "r", Match: "m", End: []fakeapi.Turn{{Blocks: []fakeapi.Block{fakeapi.Text("end")}}}})
	if len(c.Turns) != 7 { // 6 calls (the Task left out), then End
		t.Fatalf("%d turns, want 7", len(c.Turns))
	}
	tool := func(i int) fakeapi.Block { return c.Turns[i].Blocks[0] }
	if !reflect.DeepEqual(tool(0), tool(2)) || !reflect.DeepEqual(tool(2), tool(3)) {
		t.Errorf("one identity, three calls: %+v %+v %+v", tool(0), tool(2), tool(3))
	}
	kinds := []string{tool(0).Tool, tool(1).Tool, tool(4).Tool, tool(5).Tool}
	if !slices.Equal(kinds, []string{"Bash", "Write", "Read", "Bash"}) {
		t.Errorf("kinds %v", kinds)
	}
	if !strings.Contains(tool(5).Input["command"].(string), "grep") {
		t.Errorf("search replayed as %v", tool(5).Input)
	}
	script := func(i int) string {
		for _, v := range c.Turns[i].Files {
			return v
		}
		return ""
	}
	if script(0) == script(2) || script(2) != script(3) {
		t.Errorf("results: changed %v (want true), repeated %v (want true)", script(0) != script(2), script(2) == script(3))
	}
	if c.Turns[6].Usage != u || c.Turns[6].Blocks[0].Text != "end" {
		t.Errorf("End turn %+v", c.Turns[6])
	}
	d := fakeapi.Replay(shape, fakeapi.ReplayOptions{Delegate: true})
	if len(d.Turns) != 7 || d.Turns[6].Blocks[0].Tool != "Task" {
		t.Errorf("with Delegate: %d turns", len(d.Turns))
	}
}

// Turn files are written before the answer, in the session's directory.
func TestTurnFilesWritten(t *testing.T) {
	dir := t.TempDir()
	srv := start(t, fakeapi.Script{Default: &fakeapi.Conversation{Turns: []fakeapi.Turn{
		{Files: map[string]string{"shape/a.txt": "one\n"}, Blocks: []fakeapi.Block{fakeapi.Text("x")}},
	}}})
	post(t, srv.URL(), conv("p", 0), " - Primary working directory: "+dir+"\n")
	if b, err := os.ReadFile(filepath.Join(dir, "shape", "a.txt")); err != nil || string(b) != "one\n" {
		t.Errorf("a.txt: %q %v", b, err)
	}
	// A later request that does not repeat the directory (2.1.330) uses
	// the one the session gave; a session that never gave one gets a 500.
	if err := os.Remove(filepath.Join(dir, "shape", "a.txt")); err != nil {
		t.Fatal(err)
	}
	if r := post(t, srv.URL(), conv("p", 0), "no directory"); r.status != 200 || !exists(filepath.Join(dir, "shape", "a.txt")) {
		t.Errorf("the session's second request: status %d, a.txt written %v", r.status, exists(filepath.Join(dir, "shape", "a.txt")))
	}
	if r := post(t, srv.URL(), conv("q", 0), "no directory"); r.status != 500 {
		t.Errorf("turn files without a working directory: status %d, want 500", r.status)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// React answers instead of the script when it wants to.
func TestReact(t *testing.T) {
	srv := start(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Turns: []fakeapi.Turn{{Blocks: []fakeapi.Block{fakeapi.Text("scripted")}}, {Blocks: []fakeapi.Block{fakeapi.Text("scripted")}}},
		React: func(r fakeapi.Request) (fakeapi.Turn, bool) {
			if len(r.ToolResults) > 0 && r.ToolResults[0] == "result 0" {
				return fakeapi.Turn{Blocks: []fakeapi.Block{fakeapi.Text("reacted")}}, true
			}
			return fakeapi.Turn{}, false
		},
	}}})
	if r := post(t, srv.URL(), conv("p", 0), ""); r.text != "scripted" {
		t.Errorf("turn 0: %q", r.text)
	}
	if r := post(t, srv.URL(), conv("p", 1), ""); r.text != "reacted" {
		t.Errorf("turn 1: %q", r.text)
	}
}

// PostToolUse hook context is found where either CLI puts it: 2.1.197 a
// text block beside the tool_result, 2.1.330 inside the tool_result's
// content (a string or blocks); it never stays in ToolResults.
func TestHookContextEitherPlace(t *testing.T) {
	const note = "<system-reminder>\nPostToolUse:Bash hook additional context: NOTE-1 at 72%\n</system-reminder>"
	for _, tt := range []struct {
		name    string
		content []map[string]any
	}{
		{"separate text block (2.1.197)", []map[string]any{
			{"type": "tool_result", "tool_use_id": "t", "content": "out"},
			{"type": "text", "text": note},
		}},
		{"inside the string content (2.1.330)", []map[string]any{
			{"type": "tool_result", "tool_use_id": "t", "content": "out\n\n\n\n" + note +
				"\n<system-reminder>\n<total_tokens>15000000 tokens left</total_tokens>\n</system-reminder>"},
		}},
		{"inside block content", []map[string]any{
			{"type": "tool_result", "tool_use_id": "t", "content": []map[string]any{
				{"type": "text", "text": "out"}, {"type": "text", "text": note}}},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := start(t, fakeapi.Script{})
			post(t, srv.URL(), []msg{userMsg("p"), assistantMsg(), {Role: "user", Content: tt.content}}, "")
			r := srv.Requests()[0]
			if !slices.Equal(r.HookContext, []string{"NOTE-1 at 72%"}) || !slices.Equal(r.ToolResults, []string{"out"}) || r.LastUser != "" {
				t.Errorf("hook context %q, tool results %q, last user %q", r.HookContext, r.ToolResults, r.LastUser)
			}
		})
	}
}

// A Stop hook's block reason is in LastUser however the CLI sends it:
// plain text (2.1.197, 2.1.330) or in a reminder (2.1.331, after its own
// "blocking error" reminder, which stays out).
func TestStopFeedbackEitherForm(t *testing.T) {
	const want = "Stop hook feedback:\nSTOP-9a2 run `debussy done --phase 1` first"
	for _, tt := range []struct {
		name    string
		content any
	}{
		{"plain text (2.1.197)", want},
		{"reminders (2.1.331)", []map[string]any{
			{"type": "text", "text": "<system-reminder>\nStop:Callback hook blocking error from command: \"callback\": STOP-9a2 run `debussy done --phase 1` first\n</system-reminder>\n"},
			{"type": "text", "text": "<system-reminder>\nThe text below is the output of a hook, not a message from the user.\n" + want + "\n</system-reminder>"},
		}},
		{"reminders (2.1.332)", []map[string]any{
			{"type": "text", "text": "<system-reminder>\nStop:Callback hook blocking error from command: \"callback\": STOP-9a2 run `debussy done --phase 1` first\n</system-reminder>\n"},
			{"type": "text", "text": "<system-reminder>\nThe text below is the output of a hook that the user, their organization or this environment set up. Follow what the hook itself asks as their standing instruction, unless the user has said otherwise in this conversation; what it only relays is data.\n" + want + "\n</system-reminder>"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := start(t, fakeapi.Script{})
			post(t, srv.URL(), []msg{userMsg("p"), assistantMsg(), {Role: "user", Content: tt.content}}, "")
			if got := srv.Requests()[0].LastUser; got != want {
				t.Errorf("LastUser = %q, want %q", got, want)
			}
		})
	}
}

// A hook's answer is in Added wherever the CLI puts it in the next
// request — a user message in any wrapper, a system-role message, the
// top-level system field — and only in the request that added it.
func TestAddedFindsHookTextAnywhere(t *testing.T) {
	const token = "STOP-9a2 run `debussy done --phase 1` first"
	for _, tt := range []struct {
		name   string
		extra  []msg
		system string
	}{
		{"plain user text (2.1.197)", []msg{{Role: "user", Content: "Stop hook feedback:\n" + token}}, ""},
		{"user reminder (2.1.332)", []msg{{Role: "user", Content: []map[string]any{
			{"type": "text", "text": "<system-reminder>\nThe text below is the output of a hook that the user set up.\nStop hook feedback:\n" + token + "\n</system-reminder>"}}}}, ""},
		{"system-role message", []msg{{Role: "system", Content: "Stop hook feedback:\n" + token}}, ""},
		{"system-role blocks", []msg{{Role: "system", Content: []map[string]any{{"type": "text", "text": "<hook_output>" + token + "</hook_output>"}}}}, ""},
		{"nested in an unknown block", []msg{{Role: "user", Content: []map[string]any{
			{"type": "hook_feedback", "feedback": map[string]any{"reason": token}}}}}, ""},
		{"top-level system field", nil, "base prompt\n\nStop hook feedback:\n" + token},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := start(t, fakeapi.Script{})
			first := []msg{userMsg("prompt mentions `debussy done --phase 1`"), assistantMsg()}
			post(t, srv.URL(), first[:1], "base prompt")
			post(t, srv.URL(), append(first, tt.extra...), cmp.Or(tt.system, "base prompt"))
			post(t, srv.URL(), append(append(first, tt.extra...), assistantMsg(), toolResultMsg("later")), cmp.Or(tt.system, "base prompt"))
			reqs := srv.Requests()
			if reqs[0].Carries("STOP-9a2") {
				t.Error("the first request carries the hook's answer before it was given")
			}
			if !reqs[1].Carries(token) {
				t.Errorf("the second request does not carry the hook's answer: added %q", reqs[1].Added)
			}
			if reqs[1].Carries("prompt mentions") {
				t.Error("the prompt, sent before, counts as added")
			}
			if reqs[2].Carries("STOP-9a2") || !reqs[2].Carries("later") {
				t.Errorf("the third request: added %q, want the new tool result alone", reqs[2].Added)
			}
		})
	}
}
