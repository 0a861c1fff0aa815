package sandbox

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A boundary over temp dirs that never runs bubblewrap: for what debussy
// decides itself.
func testBoundary(t *testing.T, pol Policy) (*Boundary, Scope, string) {
	t.Helper()
	home, work := t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": home}
	b, err := New(Availability{Bwrap: "/usr/bin/bwrap"}, Options{Policy: pol, Getenv: func(k string) string { return env[k] },
		HomeRoot: t.TempDir(), AccountHome: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	state := filepath.Join(work, ".debussy")
	return b, Scope{Name: "1", Work: work, State: state, Run: filepath.Join(state, "runs", "r")}, home
}

func in(kv ...string) json.RawMessage {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

func TestRefusal(t *testing.T) {
	b, s, home := testBoundary(t, Policy{Write: []string{"~/.npm"}, AllowDomains: []string{"*.golang.org"}})
	out := t.TempDir()
	for _, tt := range []struct {
		name, tool string
		input      json.RawMessage
		refused    string // part of the refusal; "" lets it run
	}{
		{"write in the repository", "Write", in("file_path", filepath.Join(s.Work, "a.go")), ""},
		{"write relative", "Write", in("file_path", "sub/a.go"), ""},
		{"write outside", "Write", in("file_path", filepath.Join(out, "a")), "outside the places this run may write"},
		{"edit outside", "Edit", in("file_path", filepath.Join(out, "a")), "outside the places"},
		{"notebook outside", "NotebookEdit", in("notebook_path", "/etc/x.ipynb"), "outside the places"},
		{"write through ..", "Write", in("file_path", s.Work+"/../escape"), "outside the places"},
		{"write a configured cache", "Write", in("file_path", filepath.Join(home, ".npm", "x")), ""},
		{"write its own temp dir", "Write", in("file_path", filepath.Join(b.tempOf(s), "x")), ""},
		{"write another phase's temp dir", "Write", in("file_path", filepath.Join(b.tempOf(Scope{Name: "2"}), "x")), "outside the places"},
		{"write the run's state", "Write", in("file_path", filepath.Join(s.Run, "phase-1", "handoff-1.md")), ""},
		{"write the ledger", "Write", in("file_path", filepath.Join(s.State, "state.json")), "outside the places"},
		{"write the repository's Claude settings", "Edit", in("file_path", filepath.Join(s.Work, ".claude", "settings.json")), "loosen the sandbox"},
		{"write the CLI's settings", "Write", in("file_path", filepath.Join(home, ".claude", "settings.json")), "outside the places"},
		{"write a CLI transcript", "Write", in("file_path", filepath.Join(home, ".claude", "projects", "x")), ""},
		{"read a key", "Read", in("file_path", filepath.Join(home, ".ssh", "id_rsa")), "hidden credential path"},
		{"read ~/.aws", "Read", in("file_path", "~/.aws/credentials"), "hidden credential path"},
		{"grep ~/.ssh", "Grep", in("pattern", "KEY", "path", filepath.Join(home, ".ssh")), "hidden credential path"},
		{"glob ~/.ssh", "Glob", in("pattern", home+"/.ssh/*"), "hidden credential path"},
		{"read the CLI's credentials", "Read", in("file_path", filepath.Join(home, ".claude", ".credentials.json")), "hidden credential path"},
		{"read a source file", "Read", in("file_path", "/etc/hostname"), ""},
		{"fetch an allowed host", "WebFetch", in("url", "https://proxy.golang.org/x"), ""},
		{"fetch another", "WebFetch", in("url", "http://127.0.0.1:8080/"), "not in sandbox_allow_domains"},
		{"Bash is bounded by the kernel", "Bash", in("command", "echo x > /etc/x"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := b.Checks(s).Refusal(tt.tool, tt.input)
			if (tt.refused == "") != (got == "") || !strings.Contains(got, tt.refused) {
				t.Errorf("Refusal = %q, want %q", got, tt.refused)
			}
			if got != "" && !strings.HasPrefix(got, "debussy sandbox: ") {
				t.Errorf("the refusal does not say it is the sandbox's: %q", got)
			}
		})
	}
}

func TestRefused(t *testing.T) {
	b, s, home := testBoundary(t, Policy{})
	for _, tt := range []struct {
		name, tool string
		input      json.RawMessage
		result     string
		want       string
	}{
		{"bash write", "Bash", in("command", "echo > /x"), "/bin/bash: line 1: /x: Read-only file system", "write"},
		{"write tool", "Write", in("file_path", "/x"), "EROFS: read-only file system, open '/x.tmp'", "write"},
		{"cat a key, as typed", "Bash", in("command", "cat ~/.ssh/id_rsa"), "cat: " + home + "/.ssh/id_rsa: No such file or directory", "read"},
		{"cat a key, absolute", "Bash", in("command", "cat "+home+"/.aws/credentials"), "No such file or directory", "read"},
		{"a file that is just missing", "Bash", in("command", "cat nothere"), "cat: nothere: No such file or directory", ""},
		{"curl", "Bash", in("command", "curl https://example.com"), "curl: (56) CONNECT tunnel failed, response 403", "network"},
		{"/dev/tcp", "Bash", in("command", "exec 3<>/dev/tcp/127.0.0.1/80"), "/bin/bash: connect: Connection refused", "network"},
		{"npm", "Bash", in("command", "npm ci"), "npm error code ENOTFOUND", "network"},
		{"a failing test", "Bash", in("command", "go test ./..."), "--- FAIL: TestX\nFAIL", ""},
		{"nothing", "Bash", in("command", "true"), "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := b.Checks(s).Refused(tt.tool, tt.input, tt.result); got != tt.want {
				t.Errorf("Refused = %q, want %q", got, tt.want)
			}
		})
	}
}

// CONNECT to an allowed host is tunnelled both ways; to another it is 403.
func TestProxyConnect(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	_, port, _ := net.SplitHostPort(echo.Addr().String())
	sock := filepath.Join(t.TempDir(), "p.sock")
	p, err := StartProxy(sock, []string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	connect := func(host string) (net.Conn, string) {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(c, "CONNECT "+host+":"+port+" HTTP/1.1\r\nHost: "+host+":"+port+"\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		status, _ := bufio.NewReader(c).ReadString('\n')
		return c, status
	}
	c, status := connect("localhost")
	if !strings.Contains(status, "200") {
		t.Fatalf("CONNECT localhost: %q", status)
	}
	// The status line's reader may have buffered nothing else: the tunnel
	// echoes what is sent now.
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping\n" {
		t.Errorf("through the tunnel: %q %v", buf, err)
	}
	c.Close()
	c, status = connect("127.0.0.1")
	defer c.Close()
	if !strings.Contains(status, "403") {
		t.Errorf("CONNECT to a host not allowed: %q", status)
	}
	if _, err := os.Stat(sock); err != nil {
		t.Errorf("socket: %v", err)
	}
}
