package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/state"
)

// The export bundle carries structure only: planted strings under neutral
// names — in the agent's text, a tool's input and output, a gate's output,
// a phase's error, a nudge's arguments — reach none of its files, while
// the run's structure (phases, gates by name and exit, the public reason)
// does. The sessions' streams hold them, and stay in .debussy/.
func TestExportCarriesStructureOnly(t *testing.T) {
	dir, store := logsRun(t, state.StatusFailed)
	planted := []string{"Qx7vT2mLp9Rk", "Zt4Hw8NcY1bE", "Lm3Pq6Rs0Vu2", "Jd5Kf1Gh8Wy4", "Nb2Xc7Vz5Mq9"}
	l, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	p := l.Run("r1").Phase("2")
	p.LastError = "phase 2 failed on attempt 1: gate 1 \"test\" failed (exit 1): FAIL near " + planted[0]
	p.Reason = `phase 2 failed on attempt 1: gate 1 "test" failed (exit 1)`
	p.Question, p.Uncommitted = "why "+planted[1], "commit: "+planted[1]
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(store.EventsPath("r1"), os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`{"event":"gate","phase":"2","gate":"test","command":"go test ./...","exit_code":1,"output_tail":"FAIL near ` + planted[0] + `"}`,
		`{"event":"remediation","phase":"2","attempt":2,"problem":"gate test failed: ` + planted[0] + `"}`,
		`{"event":"nudge","phase":"2","session":1,"turn":1,"kind":"doom_loop","tool":"Bash","args":"cat ` + planted[2] + `","count":3}`,
		`{"event":"note","phase":"2","session":1,"turn":1,"tool":"Bash","chars":20,"text":"saw ` + planted[3] + `"}`,
		`{"event":"commit_failed","phase":"2","error":"hook said ` + planted[4] + `"}`,
		// Local paths: inside the repository, named relative to it; outside, by their last element.
		`{"event":"checkpoint","phase":"2","path":"` + filepath.Join(dir, ".debussy", "runs", "r1", "phase-2", "checkpoint-1.md") + `"}`,
		`{"event":"worktree","phase":"2","path":"/home/alice-the-user/wt/phase-2","branch":"b"}`,
	} {
		f.WriteString(line + "\n")
	}
	f.Close()
	// The agent's text and a tool's output, in a session's stream.
	msg, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{
		"id": "msg_9", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": []map[string]any{{"type": "text", "text": "the build ref is " + planted[3]},
			{"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": map[string]string{"command": "echo " + planted[2]}}},
		"usage": map[string]int{"input_tokens": 9000, "output_tokens": 1}}, "session_id": "s9"})
	writeSession(t, store, "r1", "2", 1, append(msg, '\n'))
	if err := store.WriteSignal("r1", state.Signal{Phase: "2", Status: state.StatusFailed, Reason: "tests fail", At: time.Now()}); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "bundle")
	code, stdout, stderr := invoke(t, dir, nil, "export", "-o", out)
	if code != 0 {
		t.Fatalf("export: exit %d\n%s%s", code, stdout, stderr)
	}
	all := ""
	for _, name := range exportFiles {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatalf("bundle lacks %s: %v", name, err)
		}
		for _, s := range planted {
			if strings.Contains(string(data), s) {
				t.Errorf("%s carries %q", name, s)
			}
		}
		all += string(data)
	}
	for _, local := range []string{dir, "alice-the-user"} {
		if strings.Contains(all, local) {
			t.Errorf("the bundle names the local path %q", local)
		}
	}
	for _, want := range []string{`gate 1 \"test\" failed (exit 1)`, "Build", `"gate":"test"`, "text withheld", "Bash", `".debussy/runs/r1/phase-2/checkpoint-1.md"`} {
		if !strings.Contains(all, want) {
			t.Errorf("the bundle lacks %q", want)
		}
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "session-") || strings.HasPrefix(e.Name(), "checkpoint-") {
			t.Errorf("the bundle holds %s", e.Name())
		}
	}
	// Inside .debussy/ is refused: that directory is never uploaded.
	if code, _, stderr := invoke(t, dir, nil, "export", "-o", filepath.Join(dir, ".debussy", "x")); code != 2 || !strings.Contains(stderr, "never uploaded") {
		t.Errorf("export into .debussy/: exit %d, %s", code, stderr)
	}
	if code, _, stderr := invoke(t, dir, nil, "export"); code != 2 || !strings.Contains(stderr, "-o DIR") {
		t.Errorf("export without -o: exit %d, %s", code, stderr)
	}
}
