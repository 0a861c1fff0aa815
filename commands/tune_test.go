package commands

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/history"
)

// tuneRepo is a repository whose .debussy holds a real run's record
// (history's testdata: one phase, two restarts at context_threshold 70).
func tuneRepo(t *testing.T) string {
	t.Helper()
	dir := gitRepo(t)
	if err := os.MkdirAll(filepath.Join(dir, ".debussy"), 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join("..", "history", "testdata", "run", "runs"), filepath.Join(dir, ".debussy")).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	return dir
}

type tuneJSON struct {
	Streams []struct {
		Source string `json:"source"`
	} `json:"streams"`
	SelfCheck struct {
		Exact bool `json:"exact"`
	} `json:"self_check"`
	Candidates []struct {
		Current           bool  `json:"current"`
		ContextThreshold  int   `json:"context_threshold"`
		ContextMaxTokens  int   `json:"context_max_tokens"`
		RestartsBySession []int `json:"restarts_by_session"`
	} `json:"candidates"`
	Recommended *struct {
		ContextThreshold int `json:"context_threshold"`
		ContextMaxTokens int `json:"context_max_tokens"`
		MaxRestarts      int `json:"max_restarts"`
	} `json:"recommended"`
	Written string `json:"written"`
}

func runTuneJSON(t *testing.T, dir string, env map[string]string, args ...string) tuneJSON {
	t.Helper()
	code, out, errOut := invoke(t, dir, env, append([]string{"tune", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("tune: exit %d\n%s\n%s", code, out, errOut)
	}
	var tj tuneJSON
	if err := json.Unmarshal([]byte(out), &tj); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return tj
}

func TestTuneRecordedRun(t *testing.T) {
	dir := tuneRepo(t)
	tj := runTuneJSON(t, dir, nil, "--threshold", "60,70", "--cap", "200K,400K")
	if !tj.SelfCheck.Exact || len(tj.Streams) != 1 || tj.Recommended == nil {
		t.Fatalf("%+v", tj)
	}
	if c := tj.Candidates[0]; !c.Current || c.ContextThreshold != 80 {
		t.Errorf("the current settings are not first: %+v", c)
	}
	if len(tj.Candidates) != 5 { // the current, then 60 and 70 at 200K and 400K
		t.Errorf("%d candidates: %+v", len(tj.Candidates), tj.Candidates)
	}
	code, out, _ := invoke(t, dir, nil, "tune", "--threshold", "70")
	if code != 0 || !strings.Contains(out, "Self-check at the recorded settings: exact") || !strings.Contains(out, "Recommended (objective cost)") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// --write keeps the user's file and leaves one that loads and that
// `debussy check` accepts.
func TestTuneWrite(t *testing.T) {
	dir := tuneRepo(t)
	user := "# the team's settings\nmodel: claude-sonnet-4-5 # cheap\nmax_restarts: 2\n"
	os.WriteFile(filepath.Join(dir, config.FileName), []byte(user), 0o644)
	tj := runTuneJSON(t, dir, nil, "--write", "--objective", "balanced")
	if tj.Written != filepath.Join(dir, config.FileName) || tj.Recommended == nil {
		t.Fatalf("written %q, recommended %+v", tj.Written, tj.Recommended)
	}
	data, _ := os.ReadFile(tj.Written)
	text := string(data)
	runs, _ := filepath.Glob(filepath.Join(dir, ".debussy", "runs", "*"))
	for _, want := range []string{"# the team's settings\nmodel: claude-sonnet-4-5 # cheap\n", "# debussy tune ",
		"(objective balanced): from 3 sessions of run " + filepath.Base(runs[0]) + "."} {
		if !strings.Contains(text, want) {
			t.Errorf("the file lacks %q:\n%s", want, text)
		}
	}
	cfg, _, err := config.Load(dir, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := tj.Recommended; cfg.ContextThreshold != r.ContextThreshold || cfg.ContextMaxTokens != r.ContextMaxTokens || cfg.MaxRestarts != r.MaxRestarts {
		t.Errorf("the file says %d/%d/%d, the recommendation %+v", cfg.ContextThreshold, cfg.ContextMaxTokens, cfg.MaxRestarts, r)
	}
	// gitRepo's plan (examples/demo), committed.
	if code, out, errOut := invoke(t, dir, nil, "check", "plan/MASTER_PLAN.md"); code != 0 {
		t.Errorf("debussy check after --write: exit %d\n%s\n%s", code, out, errOut)
	}
	// Twice: still one comment.
	runTuneJSON(t, dir, nil, "--write")
	data, _ = os.ReadFile(tj.Written)
	if n := strings.Count(string(data), "# debussy tune 2"); n != 1 {
		t.Errorf("%d tune comments after two writes:\n%s", n, data)
	}
}

// --from-claude: the CLI's folder for this repository under HOME, or under
// CLAUDE_CONFIG_DIR; a folder given as --from-claude DIR or --from-claude=DIR.
func TestTuneFromClaude(t *testing.T) {
	dir := gitRepo(t)
	home := t.TempDir()
	src, _ := filepath.Abs(filepath.Join("..", "history", "testdata", "claude", "2.1.197"))
	place := func(configDir string) {
		real, _ := filepath.EvalSymlinks(dir)
		dst := filepath.Join(configDir, "projects", history.ProjectFolder(real))
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
	}
	place(filepath.Join(home, ".claude"))
	env := map[string]string{"HOME": home}
	for _, args := range [][]string{{"--from-claude"}, {"--from-claude", src}, {"--from-claude=" + src}, {src, "--from-claude"}} {
		tj := runTuneJSON(t, dir, env, args...)
		if len(tj.Streams) != 1 || tj.Streams[0].Source != "claude" || len(tj.Candidates[0].RestartsBySession) != 1 {
			t.Errorf("%v: %+v", args, tj)
		}
	}
	// The folder given is read, not the default one.
	empty := t.TempDir()
	if tj := runTuneJSON(t, dir, env, "--from-claude", empty); len(tj.Streams) != 0 {
		t.Errorf("--from-claude %s read another folder: %+v", empty, tj.Streams)
	}
	env["CLAUDE_CONFIG_DIR"] = filepath.Join(home, "cfg")
	if tj := runTuneJSON(t, dir, env, "--from-claude"); len(tj.Streams) != 0 {
		t.Errorf("CLAUDE_CONFIG_DIR set, ~/.claude read: %+v", tj.Streams)
	}
	place(env["CLAUDE_CONFIG_DIR"])
	if tj := runTuneJSON(t, dir, env, "--from-claude"); len(tj.Streams) != 1 {
		t.Errorf("CLAUDE_CONFIG_DIR's folder not read: %+v", tj.Streams)
	}
}

func TestTuneUsage(t *testing.T) {
	dir := gitRepo(t)
	for _, args := range [][]string{{"--threshold", "0"}, {"--threshold", "abc"}, {"--cap", "lots"}, {"--objective", "speed"},
		{"--max-restarts", "-1"}, {"a.md", "b.md"}} {
		if code, _, errOut := invoke(t, dir, nil, append([]string{"tune"}, args...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, errOut)
		}
	}
	code, out, _ := invoke(t, dir, nil, "tune")
	if code != 0 || !strings.Contains(out, "Nothing to replay") {
		t.Errorf("no runs: exit %d\n%s", code, out)
	}
	if code, _, errOut := invoke(t, dir, nil, "tune", "--write"); code != 2 || !strings.Contains(errOut, "no sessions to tune from") {
		t.Errorf("--write without sessions: exit %d\n%s", code, errOut)
	}
	for _, tt := range []struct {
		in   string
		want int
	}{{"200K", 200_000}, {"1M", 1_000_000}, {"1.5M", 1_500_000}, {"250000", 250_000}, {"250_000", 250_000}, {"none", 0}} {
		if got, err := parseTokens(tt.in); err != nil || got != tt.want {
			t.Errorf("parseTokens(%q) = %d, %v", tt.in, got, err)
		}
	}
}
