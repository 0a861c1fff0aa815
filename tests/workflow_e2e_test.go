package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// The CI recipe for real: examples/github-actions-matrix.yml's jobs run here
// as GitHub would run them — each job in a fresh clone of an "origin"
// repository, its run: scripts verbatim through bash -eo pipefail with the
// ${{ }} expressions filled in, the if: conditions honoured — wave after
// wave, until the plan job's matrix is empty: phase jobs merge their
// dependencies' branches and push their own (--base deps --push), and the
// collect job merges them (debussy collect). The install step runs as
// written against a stand-in release (gh release download serves an
// archive of the debussy under test and its checksums.txt, which the step
// verifies); npm only records the pinned claude it installs (the real CLI,
// against the fake API, is on PATH already), gh the dispatch. What a phase
// job uploads is debussy export's directory, which carries no session log.
func TestWorkflowMatrixRunsThePlan(t *testing.T) {
	claudetest.OncePerSuite(t, "the CI recipe's jobs and their waves")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Write("base.txt", "base\n")),
			turn(21000, done("1")),
			turn(22000, fakeapi.Text("Phase 1 done.")),
		}},
		{Name: "p2", Match: phaseMatch("2"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("cat base.txt > left.txt && debussy done --phase 2")),
			turn(21000, fakeapi.Text("Phase 2 done.")),
		}},
		{Name: "p3", Match: phaseMatch("3"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("cat base.txt > right.txt && debussy done --phase 3")),
			turn(21000, fakeapi.Text("Phase 3 done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{
		{ID: "1", Title: "Base", Gates: []string{"base: `test -f base.txt`"}},
		{ID: "2", Title: "Left", Deps: []string{"1"}, Gates: []string{"left: `grep -q base left.txt`"}},
		{ID: "3", Title: "Right", Deps: []string{"1"}, Gates: []string{"right: `grep -q base right.txt`"}},
	}, "")
	w := newWorkflow(t, h, filepath.Join("..", "examples", "github-actions-matrix.yml"))

	var waves []string
	for wave := 1; wave <= 4; wave++ {
		w.vars["github.run_id"] = fmt.Sprint(7000 + wave)
		plan := w.job("plan", nil)
		if plan.failed {
			t.Fatalf("wave %d: the plan job failed", wave)
		}
		matrix := plan.outputs["matrix"]
		waves = append(waves, matrix)
		w.vars["needs.plan.outputs.matrix"] = matrix
		var m struct {
			Include []map[string]string `json:"include"`
		}
		if err := json.Unmarshal([]byte(matrix), &m); err != nil {
			t.Fatalf("wave %d: matrix output %q: %v", wave, matrix, err)
		}
		if !w.runs("phase") {
			if len(m.Include) > 0 {
				t.Fatalf("wave %d: phase job skipped with matrix %s", wave, matrix)
			}
			break
		}
		for _, entry := range m.Include {
			job := w.job("phase", entry)
			if job.failed {
				t.Fatalf("wave %d: phase %s failed", wave, entry["phase"])
			}
			// What it uploads is the export: a report, never a session's log.
			if !slices.Contains(job.uploaded, "report.html") || slices.ContainsFunc(job.uploaded, func(f string) bool {
				return strings.HasPrefix(f, "session-") || strings.HasSuffix(f, ".jsonl") && f != "events.jsonl"
			}) {
				t.Errorf("wave %d: phase %s uploads %q", wave, entry["phase"], job.uploaded)
			}
			if !strings.Contains(job.summary, "```mermaid") || !strings.Contains(job.summary, "| "+entry["phase"]+" | "+entry["title"]+" | completed |") {
				t.Errorf("wave %d: phase %s's step summary lacks the table or the charts:\n%s", wave, entry["phase"], job.summary)
			}
		}
		if !w.runs("collect") {
			t.Fatalf("wave %d: collect job skipped", wave)
		}
		if job := w.job("collect", nil); job.failed {
			t.Fatalf("wave %d: the collect job failed", wave)
		}
	}
	want := []string{`{"include":[{"phase":"1","title":"Base"}]}`,
		`{"include":[{"phase":"2","title":"Left"},{"phase":"3","title":"Right"}]}`, `{"include":[]}`}
	if !slices.Equal(waves, want) {
		t.Fatalf("waves %q, want %q", waves, want)
	}

	// origin's branch has every phase completed (per git) and both parallel
	// phases' files; each phase's branch is kept, ending completed.
	out := claudetest.Git(t, w.origin, "log", "main", "--format=%(trailers:key=Debussy-Phase,valueonly,separator=)=%(trailers:key=Debussy-Event,valueonly,separator=)")
	for _, id := range []string{"1", "2", "3"} {
		if !strings.Contains(out, id+"=completed") {
			t.Errorf("origin's main lacks phase %s's completed commit:\n%s", id, out)
		}
	}
	if files := claudetest.Git(t, w.origin, "ls-tree", "--name-only", "main"); !strings.Contains(files, "left.txt") || !strings.Contains(files, "right.txt") {
		t.Errorf("origin's main holds %q", files)
	}
	for _, id := range []string{"1", "2", "3"} {
		tip := originTip(w.origin, e2ePlanBranch(id))
		if ev := claudetest.Git(t, w.origin, "log", "-1", "--format=%(trailers:key=Debussy-Event,valueonly)", tip); tip == "" || ev != "completed" {
			t.Errorf("phase %s's branch on origin at %q ends with event %q", id, tip, ev)
		}
	}
	calls := w.calls()
	dispatch := `gh workflow run debussy matrix --ref main -f plan=plan/MASTER_PLAN.md`
	if n := strings.Count(calls, dispatch); n != 2 {
		t.Errorf("%d dispatches of the next wave, want 2:\n%s", n, calls)
	}
	for _, install := range []string{"gh release download " + w.wf.Env["DEBUSSY_VERSION"] + " --repo debussy-dev/debussy",
		"npm install -g @anthropic-ai/claude-code@" + w.wf.Env["CLAUDE_CODE_VERSION"]} {
		if !strings.Contains(calls, install) {
			t.Errorf("the install step did not run %q:\n%s", install, calls)
		}
	}
	if strings.Contains(calls, "go install") {
		t.Errorf("a job builds debussy instead of installing the release:\n%s", calls)
	}
}

// fakeRelease is a directory holding what gh release download serves for
// version: the archive of this machine's platform, with the debussy under
// test, and a checksums.txt that also lists an archive not downloaded.
func fakeRelease(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	archive := fmt.Sprintf("debussy_%s_linux_%s.tar.gz", strings.TrimPrefix(version, "v"), runtime.GOARCH)
	stage := t.TempDir()
	data, err := os.ReadFile(debussyBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage, "debussy"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-czf", filepath.Join(dir, archive), "-C", stage, "debussy").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	cmd := exec.Command("sha256sum", archive)
	cmd.Dir = dir
	sum, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Repeat("0", 64) + "  debussy_" + strings.TrimPrefix(version, "v") + "_darwin_arm64.tar.gz\n"
	if err := os.WriteFile(filepath.Join(dir, "checksums.txt"), append([]byte(other), sum...), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ghStub is gh: every call is recorded; `release download TAG --dir D
// --pattern P…` copies the files of release that match P into D.
const ghStub = `#!/bin/bash
echo "gh $*" >> %[1]q
[[ $1 == release && $2 == download ]] || exit 0
dir=. patterns=()
shift 3
while (($#)); do
	case $1 in
	--dir) dir=$2; shift ;;
	--pattern) patterns+=("$2"); shift ;;
	esac
	shift
done
for p in "${patterns[@]}"; do
	cp %[2]q/$p "$dir"/ || { echo "gh: release has no asset $p" >&2; exit 1; }
done
`

// ghWorkflow is the part of a workflow file the test runs.
type ghWorkflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]ghJob  `yaml:"jobs"`
}

type ghJob struct {
	If       string            `yaml:"if"`
	Outputs  map[string]string `yaml:"outputs"`
	Steps    []ghStep          `yaml:"steps"`
	Strategy struct {
		Matrix any `yaml:"matrix"`
	} `yaml:"strategy"`
}

type ghStep struct {
	ID   string            `yaml:"id"`
	Name string            `yaml:"name"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
}

// workflow runs a workflow's jobs on this machine.
type workflow struct {
	t      *testing.T
	h      *harness
	wf     ghWorkflow
	origin string            // the bare repository jobs clone and push to
	bin    string            // debussy and the stubs, first on PATH
	vars   map[string]string // the ${{ }} contexts
}

func newWorkflow(t *testing.T, h *harness, path string) *workflow {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w := &workflow{t: t, h: h, bin: t.TempDir(), origin: filepath.Join(t.TempDir(), "origin.git")}
	if err := yaml.Unmarshal(data, &w.wf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	claudetest.Git(t, h.Repo, "clone", "-q", "--bare", h.Repo, w.origin)
	if err := os.Symlink(debussyBin, filepath.Join(w.bin, "debussy")); err != nil {
		t.Fatal(err)
	}
	// The install step's npm install and go, were it called, only say they
	// were; gh serves a release of the debussy under test.
	for _, stub := range []string{"go", "npm"} {
		body := fmt.Sprintf("#!/bin/sh\necho \"%s $*\" >> %q\n", stub, filepath.Join(w.bin, "calls.log"))
		if err := os.WriteFile(filepath.Join(w.bin, stub), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	release := fakeRelease(t, w.wf.Env["DEBUSSY_VERSION"])
	gh := fmt.Sprintf(ghStub, filepath.Join(w.bin, "calls.log"), release)
	if err := os.WriteFile(filepath.Join(w.bin, "gh"), []byte(gh), 0o755); err != nil {
		t.Fatal(err)
	}
	w.vars = map[string]string{
		"inputs.plan":               "plan/MASTER_PLAN.md",
		"github.ref":                "refs/heads/main",
		"github.ref_name":           "main",
		"github.workflow":           "debussy matrix",
		"github.token":              "gh-token",
		"secrets.ANTHROPIC_API_KEY": "test", // the fake API's
	}
	return w
}

func (w *workflow) calls() string {
	data, _ := os.ReadFile(filepath.Join(w.bin, "calls.log"))
	return string(data)
}

var expr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// expand fills in ${{ name }}; an expression the test does not know fails
// it, so a changed workflow is noticed here rather than run half-way.
func (w *workflow) expand(s string) string {
	return expr.ReplaceAllStringFunc(s, func(m string) string {
		name := expr.FindStringSubmatch(m)[1]
		v, ok := w.vars[name]
		if !ok {
			w.t.Fatalf("workflow expression %s: unknown to this test", m)
		}
		return v
	})
}

// cond evaluates the if: forms the workflow uses.
func (w *workflow) cond(s string, failed bool) bool {
	if s == "" {
		return !failed
	}
	ok := true
	for _, term := range strings.Split(s, "&&") {
		term = strings.TrimSpace(term)
		switch {
		case term == "success()":
			ok = ok && !failed
		case term == "failure()":
			ok = ok && failed
		case term == "always()":
		case strings.Contains(term, "!="), strings.Contains(term, "=="):
			op := "=="
			if strings.Contains(term, "!=") {
				op = "!="
			}
			name, lit, _ := strings.Cut(term, op)
			v, known := w.vars[strings.TrimSpace(name)]
			lit = strings.Trim(strings.TrimSpace(lit), "'")
			if !known {
				w.t.Fatalf("if: %s: %s unknown to this test", s, name)
			}
			ok = ok && (v == lit) == (op == "==")
		default:
			w.t.Fatalf("if: %s: %q unknown to this test", s, term)
		}
	}
	if !strings.Contains(s, "always()") && !strings.Contains(s, "failure()") {
		ok = ok && !failed
	}
	return ok
}

// runs reports whether the job's if: lets it run after the plan job.
func (w *workflow) runs(name string) bool {
	return w.cond(w.wf.Jobs[name].If, false)
}

type jobResult struct {
	failed   bool
	outputs  map[string]string
	summary  string   // what the job wrote to GITHUB_STEP_SUMMARY
	uploaded []string // the files under the export directory the job uploads
}

// job runs one job (one matrix entry) in a fresh workspace.
func (w *workflow) job(name string, matrix map[string]string) jobResult {
	w.t.Helper()
	job, ok := w.wf.Jobs[name]
	if !ok {
		w.t.Fatalf("the workflow has no job %q", name)
	}
	if name == "phase" {
		if m, _ := job.Strategy.Matrix.(string); m != "${{ fromJSON(needs.plan.outputs.matrix) }}" {
			w.t.Fatalf("phase job's matrix is %v, not the plan job's output", job.Strategy.Matrix)
		}
	}
	for k, v := range matrix {
		w.vars["matrix."+k] = v
	}
	dir := w.t.TempDir()
	ws, temp := filepath.Join(dir, "work"), filepath.Join(dir, "runner-temp")
	if err := os.Mkdir(temp, 0o755); err != nil {
		w.t.Fatal(err)
	}
	output, summary, ghPath := filepath.Join(dir, "output"), filepath.Join(dir, "summary.md"), filepath.Join(dir, "path")
	path := w.bin + string(os.PathListSeparator) + os.Getenv("PATH")
	env := append(slices.Clone(w.h.Env), "CI=true", "GITHUB_ACTIONS=true", "GITHUB_WORKSPACE="+ws,
		"GITHUB_OUTPUT="+output, "GITHUB_STEP_SUMMARY="+summary, "GITHUB_PATH="+ghPath, "RUNNER_TEMP="+temp)
	for k, v := range w.wf.Env {
		env = append(env, k+"="+w.expand(v))
	}
	res := jobResult{outputs: map[string]string{}}
	for i, st := range job.Steps {
		what := st.Name
		if what == "" {
			what = st.Uses + st.Run
		}
		if !w.cond(st.If, res.failed) {
			w.t.Logf("job %s step %d skipped: %s", name, i+1, what)
			continue
		}
		switch action, _, _ := strings.Cut(st.Uses, "@"); action {
		case "actions/checkout":
			// fetch-depth: 0 — the whole history, as a clone has it.
			claudetest.Git(w.t, dir, "clone", "-q", w.origin, ws)
			continue
		case "actions/setup-go", "actions/setup-node", "actions/upload-artifact":
			continue // the machine has them; the artifact stays in the workspace
		case "":
		default:
			w.t.Fatalf("job %s step %d uses %s: unknown to this test", name, i+1, st.Uses)
		}
		// GITHUB_PATH's lines go before PATH in the steps after.
		stepPath := path
		if data, err := os.ReadFile(ghPath); err == nil {
			for _, l := range strings.Fields(string(data)) {
				stepPath = l + string(os.PathListSeparator) + stepPath
			}
		}
		stepEnv := append(slices.Clone(env), "PATH="+stepPath)
		for k, v := range st.Env {
			stepEnv = append(stepEnv, k+"="+w.expand(v))
		}
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", w.expand(st.Run))
		cmd.Dir, cmd.Env = ws, stepEnv
		out, err := cmd.CombinedOutput()
		w.t.Logf("job %s %v step %d (%s): err %v\n%s", name, matrix, i+1, what, err, out)
		if err != nil {
			res.failed = true
		}
		if st.ID != "" {
			data, _ := os.ReadFile(output)
			for _, l := range strings.Split(string(data), "\n") {
				if k, v, ok := strings.Cut(l, "="); ok {
					w.vars["steps."+st.ID+".outputs."+k] = v
				}
			}
		}
	}
	for k, v := range job.Outputs {
		res.outputs[k] = w.expand(v)
	}
	data, _ := os.ReadFile(summary)
	res.summary = string(data)
	_ = filepath.WalkDir(filepath.Join(temp, "debussy-export"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			res.uploaded = append(res.uploaded, filepath.Base(p))
		}
		return nil
	})
	return res
}
