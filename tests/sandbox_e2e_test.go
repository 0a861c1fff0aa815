package tests

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// The boundary, with the defaults, on a machine with bubblewrap and socat.

// needSandbox skips where the boundary cannot be made (CI installs
// bubblewrap and socat: .ci/run).
func needSandbox(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bwrap", "socat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: the sandbox cannot be tested here", tool)
		}
	}
}

// loopback is an HTTP server on 127.0.0.1 that counts the requests it got.
func loopback(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("LOOPBACK-REACHED\n"))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func tool(name string, input map[string]any) fakeapi.Block {
	return fakeapi.Block{Tool: name, Input: input}
}

// An agent that tries to write outside the repository with Bash, Write
// and Edit, to read a key planted in its HOME's ~/.ssh with Bash and Read,
// and to reach a loopback HTTP server, achieves none of it; its work in the
// repository is committed, debussy done works, the gate passes, exit 0;
// the agent was told what is bounded, and the log shows each refusal as the
// boundary's.
func TestSandboxBoundsEveryTool(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's tools and its own sandbox inside debussy's bubblewrap")
	needSandbox(t)
	out := t.TempDir()
	existing := filepath.Join(out, "existing.txt")
	if err := os.WriteFile(existing, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, hits := loopback(t)
	port := strings.TrimPrefix(srv.URL, "http://127.0.0.1:")
	const secret = "SECRET-KEY-MATERIAL-4711"

	home := t.TempDir()
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
		turn(20000, fakeapi.Bash("echo bash > "+filepath.Join(out, "bash.txt")+"; echo rc=$?")),
		turn(20500, fakeapi.Write(filepath.Join(out, "write.txt"), "write\n")),
		turn(21000, tool("Read", map[string]any{"file_path": existing})),
		turn(21500, tool("Edit", map[string]any{"file_path": existing, "old_string": "original", "new_string": "edited"})),
		turn(22000, fakeapi.Bash("cat ~/.ssh/id_ed25519; echo rc=$?")),
		turn(22500, tool("Read", map[string]any{"file_path": filepath.Join(home, ".ssh", "id_ed25519")})),
		turn(23000, fakeapi.Bash("exec 3<>/dev/tcp/127.0.0.1/"+port+" && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3; echo rc=$?")),
		turn(23500, fakeapi.Write("a.txt", "inside\n")),
		turn(24000, done("1")),
		turn(24500, fakeapi.Text("Phase 1 done.")),
	}}}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Boxed", Gates: []string{"inside: `grep -q inside a.txt`"}}}, "")
	h.Env = append(h.Env, "HOME="+home) // the last one wins
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the agent wrote outside the repository: %v", entries)
	}
	if b, _ := os.ReadFile(existing); string(b) != "original\n" {
		t.Errorf("the agent edited a file outside the repository: %q", b)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the agent's command reached the loopback server %d times", n)
	}
	for _, req := range h.API.Requests() {
		for _, res := range req.ToolResults {
			if strings.Contains(res, secret) {
				t.Fatalf("the agent read the planted key: %q", res)
			}
		}
	}
	if files := h.git("show", "--name-only", "--format=", "HEAD"); !strings.Contains(files, "a.txt") {
		t.Errorf("the agent's work is not committed: %q", files)
	}
	if !strings.Contains(r.Stderr, "sandbox auto: bubblewrap bounds") {
		t.Errorf("the run's first lines do not say the boundary is in force:\n%s", r.Stderr)
	}
	// Each attempt shows as the boundary's refusal: Write, Edit and Read
	// refused before they ran, Bash's write, read and connection after.
	for _, want := range []string{"write outside the places", "read of a hidden credential path", "connection outside sandbox_allow_domains"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("the log does not show %q as a boundary refusal:\n%s", want, r.Stderr)
		}
	}
	if n := strings.Count(r.Stderr, "sandbox boundary refused a tool call"); n < 6 {
		t.Errorf("%d boundary refusals logged, want one per attempt (6):\n%s", n, r.Stderr)
	}
	if p := h.sessionsOf(phaseMatch("1")); len(p) != 1 || !strings.Contains(p[0], "This run is sandboxed") {
		t.Errorf("the agent was not told what is bounded: %q", p)
	}
	h.noOrphans()
}

// A gate runs the agent's code: it is bounded like the agent. One that
// writes outside the repository fails, and its output says why.
func TestSandboxGateWritingOutsideFails(t *testing.T) {
	needSandbox(t)
	out := t.TempDir()
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
		turn(20000, fakeapi.Write("a.txt", "a\n"), done("1")),
		turn(21000, fakeapi.Text("done")),
	}}}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Gate", Gates: []string{
		"inside: `echo ok > in-repo.txt && rm in-repo.txt`",
		"outside: `touch " + filepath.Join(out, "gate.txt") + "`",
	}}}, "max_retries: 0\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 1 {
		t.Fatalf("want exit 1 (the gate fails): %s", r)
	}
	if _, err := os.Stat(filepath.Join(out, "gate.txt")); err == nil {
		t.Errorf("the gate wrote outside the repository")
	}
	if !strings.Contains(r.Stderr, "gate passed phase=1 gate=inside") {
		t.Errorf("a gate writing in the repository did not pass:\n%s", r.Stderr)
	}
	// The gate's output (events.jsonl keeps it; the log carries structure
	// only off a terminal) says why.
	why := false
	for _, g := range h.events("gate") {
		if tail, _ := g["output_tail"].(string); g["gate"] == "outside" && strings.Contains(tail, "Read-only file system") {
			why = true
		}
	}
	if !why {
		t.Errorf("the gate's failure does not say why: %v", h.events("gate"))
	}
}

// sandbox: on refuses a machine without bubblewrap before any session,
// exit 2, naming what to install; off is today's run, unbounded.
func TestSandboxOnWithoutBubblewrapOffUnbounded(t *testing.T) {
	needSandbox(t)
	out := t.TempDir()
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
		turn(20000, fakeapi.Write(filepath.Join(out, "write.txt"), "write\n"), done("1")),
		turn(21000, fakeapi.Text("done")),
	}}}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Off"}}, "")

	t.Run("on without bwrap", func(t *testing.T) {
		// git, but not bubblewrap, on PATH.
		bin := t.TempDir()
		git, err := exec.LookPath("git")
		if err != nil {
			t.Skip("no git")
		}
		if err := os.Symlink(git, filepath.Join(bin, "git")); err != nil {
			t.Fatal(err)
		}
		saved := h.Env
		defer func() { h.Env = saved }()
		h.Env = append(append([]string{}, saved...), "PATH="+bin)
		r := h.run("run", "plan/MASTER_PLAN.md", "--sandbox", "on")
		if r.Code != 2 || !strings.Contains(r.Stderr, "bubblewrap (bwrap)") || !strings.Contains(r.Stderr, "apt-get install bubblewrap") {
			t.Fatalf("want exit 2 naming bubblewrap and how to install it: %s", r)
		}
		if n := len(h.API.Requests()); n != 0 {
			t.Errorf("%d API requests: a session started", n)
		}
	})
	t.Run("off", func(t *testing.T) {
		r := h.run("run", "plan/MASTER_PLAN.md", "--sandbox", "off")
		if r.Code != 0 {
			t.Fatalf("want exit 0: %s", r)
		}
		if _, err := os.Stat(filepath.Join(out, "write.txt")); err != nil {
			t.Errorf("sandbox off bounded the Write tool: %v", err)
		}
		if !strings.Contains(r.Stderr, "sandbox off:") {
			t.Errorf("the run does not say it is unbounded:\n%s", r.Stderr)
		}
	})
}
