package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

const secret = "SECRET-4711"

// fixture is a boundary over temp dirs: a HOME with credentials and the
// CLI's config, another user's home, a repository with its .debussy, and
// a directory outside all of them.
type fixture struct {
	b                             *Boundary
	s                             Scope
	home, other, work, state, out string
}

func newFixture(t *testing.T, pol Policy) *fixture {
	t.Helper()
	a := Availability{Bwrap: lookPath("bwrap", os.Getenv("PATH")), Socat: lookPath("socat", os.Getenv("PATH"))}
	if a.Bwrap == "" || a.Socat == "" {
		t.Skip("bubblewrap or socat not installed")
	}
	if a = Check(context.Background(), Host{Path: os.Getenv("PATH"), Root: os.Geteuid() == 0}); a.Problem != "" {
		t.Skip(a.Problem)
	}
	f := &fixture{home: t.TempDir(), work: t.TempDir(), out: t.TempDir()}
	homes := t.TempDir()
	f.other = filepath.Join(homes, "other")
	f.state = filepath.Join(f.work, ".debussy")
	files := map[string]string{
		filepath.Join(f.home, ".ssh", "id_ed25519"):           secret,
		filepath.Join(f.home, ".aws", "credentials"):          secret,
		filepath.Join(f.home, ".netrc"):                       secret,
		filepath.Join(f.home, ".claude", "settings.json"):     "{}",
		filepath.Join(f.home, ".claude", ".credentials.json"): secret,
		filepath.Join(f.other, "notes"):                       secret,
		filepath.Join(f.state, "state.json"):                  "{}",
		filepath.Join(f.out, "existing"):                      "original",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": f.home}
	b, err := New(a, Options{Policy: pol, Getenv: func(k string) string { return env[k] }, Root: os.Geteuid() == 0,
		HomeRoot: homes, AccountHome: f.home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	f.b = b
	f.s = Scope{Name: "1", Work: f.work, State: f.state, Run: filepath.Join(f.state, "runs", "r1")}
	return f
}

// run runs bash -c script inside cmd, in the work tree.
func (f *fixture) run(t *testing.T, cmd Command, script string) (string, error) {
	t.Helper()
	argv := append(slices.Clone(cmd.Wrapper), "/bin/bash", "-c", script)
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = f.work
	c.Env = os.Environ()
	for k, v := range cmd.Env {
		c.Env = append(c.Env, k+"="+v)
	}
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	return out.String(), err
}

// What claude and everything it starts may do inside the boundary: the
// kernel refuses the rest, whichever tool asks.
func TestClaudeLayoutHolds(t *testing.T) {
	f := newFixture(t, Policy{Write: []string{"~/.cache/go-build"}})
	cmd, err := f.b.Claude(f.s)
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Env["TMPDIR"] == "" || !strings.HasPrefix(cmd.Env["TMPDIR"], f.b.temp) {
		t.Errorf("TMPDIR = %q, not the boundary's", cmd.Env["TMPDIR"])
	}
	for _, tt := range []struct {
		name, script string
		ok           bool
	}{
		{"write in the repository", "echo x > a.txt && mkdir -p sub && echo y > sub/b", true},
		{"write in the run's state", "mkdir -p " + f.s.Run + "/signals && echo x > " + f.s.Run + "/signals/1.json", true},
		{"write in temp", `echo x > "$TMPDIR/t"`, true},
		{"write in a configured cache", "echo x > " + f.home + "/.cache/go-build/c", true},
		{"write in the CLI's config dir", "mkdir -p " + f.home + "/.claude/projects && echo x > " + f.home + "/.claude/projects/s.jsonl", true},
		{"write outside", "echo x > " + f.out + "/new", false},
		{"edit outside", "echo x >> " + f.out + "/existing", false},
		{"write in home", "echo x > " + f.home + "/new", false},
		{"write debussy's ledger", "echo x > " + f.state + "/state.json", false},
		{"write the CLI's settings", "echo x > " + f.home + "/.claude/settings.json", false},
		{"read ~/.ssh", "cat " + f.home + "/.ssh/id_ed25519", false},
		{"list ~/.ssh", "ls " + f.home + "/.ssh | grep -q id_ed25519", false},
		{"read ~/.aws", "cat " + f.home + "/.aws/credentials", false},
		{"read ~/.netrc", "grep -q " + secret + " " + f.home + "/.netrc", false},
		{"read another user's home", "cat " + f.other + "/notes", false},
		{"remount read-write", "mount -o remount,rw /", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := f.run(t, cmd, tt.script)
			if (err == nil) != tt.ok {
				t.Errorf("%s: err %v, want ok %v\n%s", tt.script, err, tt.ok, out)
			}
			if strings.Contains(out, secret) {
				t.Errorf("%s read a secret: %s", tt.script, out)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(f.out, "existing")); string(b) != "original" {
		t.Errorf("a file outside changed: %q", b)
	}
	// The CLI's own sandbox: its commands' network, the same writable
	// places, and its credentials unreadable to them.
	sb := cmd.Settings
	if sb["enabled"] != true || sb["allowUnsandboxedCommands"] != false || sb["enableWeakerNestedSandbox"] != true {
		t.Errorf("settings = %v", sb)
	}
	js, _ := json.Marshal(sb)
	for _, want := range []string{`"allowedDomains":[]`, f.s.Run, filepath.Join(f.home, ".cache/go-build"), filepath.Join(f.home, ".claude/.credentials.json")} {
		if !strings.Contains(string(js), want) {
			t.Errorf("settings lack %s: %s", want, js)
		}
	}
}

// A gate has the same layout and no network at all: not even loopback.
func TestGateHasNoNetwork(t *testing.T) {
	f := newFixture(t, Policy{})
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	cmd, err := f.b.Gate(f.s)
	if err != nil {
		t.Fatal(err)
	}
	port := strings.TrimPrefix(srv.URL, "http://127.0.0.1:")
	if out, err := f.run(t, cmd, "exec 3<>/dev/tcp/127.0.0.1/"+port); err == nil || hits.Load() != 0 {
		t.Errorf("the gate reached a loopback server: %v %s", err, out)
	}
	if out, err := f.run(t, cmd, "echo x > "+f.out+"/gate"); err == nil || !strings.Contains(out, "Read-only file system") {
		t.Errorf("the gate wrote outside: %v %s", err, out)
	}
	if out, err := f.run(t, cmd, "echo x > in-repo && go env GOCACHE >/dev/null 2>&1; true"); err != nil {
		t.Errorf("the gate could not write in the repository: %v %s", err, out)
	}
}

// With sandbox_allow_domains, a gate reaches those hosts through the
// run's proxy, and no other.
func TestGateReachesAllowedDomainsOnly(t *testing.T) {
	f := newFixture(t, Policy{AllowDomains: []string{"allowed.test"}})
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, "hello from %s", r.Host)
	}))
	defer srv.Close()
	// allowed.test is the test server: the proxy's dialer knows no DNS.
	f.b.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, strings.TrimPrefix(srv.URL, "http://"))
	}
	cmd, err := f.b.Gate(f.s)
	if err != nil {
		t.Fatal(err)
	}
	get := func(host string) string {
		out, _ := f.run(t, cmd, `exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'GET http://`+host+`/ HTTP/1.0\r\nHost: `+host+`\r\n\r\n' >&3 && cat <&3`)
		return out
	}
	if out := get("allowed.test"); !strings.Contains(out, "200 OK") || !strings.Contains(out, "hello from allowed.test") {
		t.Errorf("an allowed host through the proxy:\n%s", out)
	}
	if out := get("denied.test"); !strings.Contains(out, "403") || !strings.Contains(out, "not in sandbox_allow_domains") {
		t.Errorf("another host through the proxy:\n%s", out)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("%d requests reached the server, want 1 (the allowed one)", n)
	}
	if cmd.Env["HTTPS_PROXY"] != "http://127.0.0.1:3128" {
		t.Errorf("env = %v", cmd.Env)
	}
}

// A phase in a worktree writes its worktree and the git dirs it uses, not
// the user's checkout.
func TestWorktreeScope(t *testing.T) {
	f := newFixture(t, Policy{})
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	git := func(dir string, args ...string) {
		t.Helper()
		c := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(f.work, "init", "-q", "-b", "main")
	git(f.work, "commit", "-q", "--allow-empty", "-m", "init")
	wt := filepath.Join(f.state, "worktrees", "r1", "phase-2")
	git(f.work, "worktree", "add", "-q", "-b", "p2", wt)
	s := Scope{Name: "2", Work: wt, State: f.state, Run: f.s.Run, Git: GitDirs(wt)}
	cmd, err := f.b.Claude(s)
	if err != nil {
		t.Fatal(err)
	}
	f.work = wt
	if out, err := f.run(t, cmd, "echo x > w.txt && git add w.txt && git -c user.name=t -c user.email=t@t commit -qm w"); err != nil {
		t.Errorf("git in the worktree: %v\n%s", err, out)
	}
	if out, err := f.run(t, cmd, "echo x > "+filepath.Join(filepath.Dir(f.state), "main.txt")); err == nil {
		t.Errorf("the phase wrote into the user's checkout:\n%s", out)
	}
}

// git's hooks and config run as code when debussy commits outside the
// boundary: inside it they stay read-only, while the agent's own git (add,
// commit: the index, objects and refs) still works.
func TestGitCodeReadOnly(t *testing.T) {
	f := newFixture(t, Policy{})
	gitIn := func(args ...string) {
		t.Helper()
		c := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		c.Dir = f.work
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitIn("init", "-q")
	if err := os.RemoveAll(filepath.Join(f.work, ".git", "hooks")); err != nil {
		t.Fatal(err)
	}
	gitIn("commit", "-q", "--allow-empty", "-m", "base")
	f.s.ReadOnly = GitCode(f.work)
	if len(f.s.ReadOnly) < 2 {
		t.Fatalf("GitCode = %v, want the hooks dir and the config", f.s.ReadOnly)
	}
	cmd, err := f.b.Claude(f.s)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, script string
		ok           bool
	}{
		{"the agent's own git", "echo x > a.txt && git add a.txt && git -c user.name=a -c user.email=a@a commit -qm a", true},
		{"plant a hook", "printf '#!/bin/sh\\ntouch /tmp/owned\\n' > .git/hooks/pre-commit", false},
		{"set core.hooksPath", "git config core.hooksPath /tmp", false},
		{"edit the config", "echo '[core] fsmonitor = touch /tmp/owned' >> .git/config", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := f.run(t, cmd, tt.script)
			if (err == nil) != tt.ok {
				t.Errorf("%s: err %v, want ok=%v\n%s", tt.script, err, tt.ok, out)
			}
		})
	}
	if p := f.b.Checks(f.s).Refusal("Write", json.RawMessage(`{"file_path":".git/hooks/post-commit"}`)); !strings.Contains(p, "git's config or hooks") {
		t.Errorf("Write to a hook: refusal %q", p)
	}
}
