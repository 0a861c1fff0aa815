package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"~", "/h/me"},
		{"~/.cache/go-build", "/h/me/.cache/go-build"},
		{"/srv//x/", "/srv/x"},
		{"rel/x", "rel/x"}, // left for validation to refuse
		{"~other/x", "~other/x"},
	} {
		if got := Expand(tt.in, "/h/me"); got != tt.want {
			t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAllowsHost(t *testing.T) {
	domains := []string{"proxy.golang.org", "*.npmjs.org"}
	for host, want := range map[string]bool{
		"proxy.golang.org":     true,
		"PROXY.golang.org.":    true,
		"registry.npmjs.org":   true,
		"npmjs.org":            false, // *. is for subdomains
		"evilproxy.golang.org": false,
		"golang.org":           false,
		"127.0.0.1":            false,
		"":                     false,
	} {
		if got := AllowsHost(domains, host); got != want {
			t.Errorf("AllowsHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestOtherHomes(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"alice", "bob", "me"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "notadir"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(root, "alice"), filepath.Join(root, "bob")}
	// $HOME elsewhere (a test's), the account's home in root: both mine.
	if got := OtherHomes(root, t.TempDir(), filepath.Join(root, "me")); !reflect.DeepEqual(got, want) {
		t.Errorf("OtherHomes = %q, want %q", got, want)
	}
	// A home below one of root's entries keeps that entry.
	if got := OtherHomes(root, filepath.Join(root, "bob", "sub")); !reflect.DeepEqual(got, []string{filepath.Join(root, "alice"), filepath.Join(root, "me")}) {
		t.Errorf("OtherHomes with a nested home = %q", got)
	}
}

// Mounts go shallow to deep, a path mounted twice keeps its strongest kind.
func TestLayout(t *testing.T) {
	got := layout([]mount{
		{"/r/.debussy/runs/x", writable},
		{"/r", writable},
		{"/r/.debussy", readOnly},
		{"/h/.ssh", writable}, // sandbox_write naming a hidden path
		{"/h/.ssh", hidden},
		{"/h/.cache/go-build", writable},
	})
	want := []mount{{"/r", writable}, {"/r/.debussy", readOnly}, {"/h/.ssh", hidden}, {"/h/.cache/go-build", writable}, {"/r/.debussy/runs/x", writable}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("layout =\n%v\nwant\n%v", got, want)
	}
}

func TestDecide(t *testing.T) {
	ok := Availability{Bwrap: "/usr/bin/bwrap", Socat: "/usr/bin/socat"}
	missing := Availability{Problem: "bubblewrap (bwrap) not on PATH: install it"}
	pol := Policy{Write: []string{"~/.npm"}, AllowDomains: []string{"proxy.golang.org"}}
	for _, tt := range []struct {
		name    string
		mode    Mode
		a       Availability
		bounded bool
		line    string
		err     bool
	}{
		{"auto here", Auto, ok, true, "sandbox auto: bubblewrap bounds the agent's tools and the gates: writes only to the repository (or the phase's worktree), its .debussy/ run state and a private temp dir, ~/.npm; credential files (~/.ssh, ~/.aws, … and other users' homes) hidden; network for commands and gates only to proxy.golang.org", false},
		{"on here", On, ok, true, "sandbox on: bubblewrap bounds", false},
		{"off here", Off, ok, false, "sandbox off: the agent's tools and the gates run unbounded", false},
		{"auto without", Auto, missing, false, "sandbox auto: this run is NOT bounded: bubblewrap (bwrap) not on PATH: install it (sandbox: off silences this)", false},
		{"on without", On, missing, false, "", true},
		{"off without", Off, missing, false, "sandbox off:", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Decide(tt.mode, tt.a, pol)
			if (err != nil) != tt.err || (err != nil && (!errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "bubblewrap (bwrap)"))) {
				t.Fatalf("err = %v", err)
			}
			if d.Bounded != tt.bounded || !strings.HasPrefix(d.Line, tt.line) {
				t.Errorf("Decide = %+v, want bounded %v, line starting %q", d, tt.bounded, tt.line)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	if a := Check(ctx, Host{GOOS: "darwin"}); !strings.Contains(a.Problem, "macOS") {
		t.Errorf("darwin: %+v", a)
	}
	if a := Check(ctx, Host{GOOS: "linux", Path: t.TempDir()}); a.Problem == "" || !strings.Contains(a.Problem, "bubblewrap (bwrap) and socat not on PATH") ||
		!strings.Contains(a.Problem, "apt-get install bubblewrap socat") {
		t.Errorf("no tools: %+v", a)
	}
	bin := t.TempDir()
	for _, name := range []string{"bwrap", "socat"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var probed []string
	a := Check(ctx, Host{GOOS: "linux", Path: "relative:" + bin, Probe: func(_ context.Context, argv []string) error {
		probed = argv
		return errors.New("bwrap: setting up uid map: Permission denied")
	}})
	if a.Bwrap != filepath.Join(bin, "bwrap") || !strings.Contains(a.Problem, "setting up uid map") {
		t.Errorf("a failing bwrap: %+v", a)
	}
	// The probe nests bubblewrap as claude's sandbox does.
	if strings.Count(strings.Join(probed, " "), filepath.Join(bin, "bwrap")) != 2 {
		t.Errorf("probe = %q", probed)
	}
	works := func(context.Context, []string) error { return nil }
	if a := Check(ctx, Host{GOOS: "linux", Path: bin, Probe: works}); a.Problem != "" {
		t.Errorf("a working bwrap: %+v", a)
	}
	// What claude's sandbox replaces with a fresh /dev for each command
	// cannot be bounded: the commands would not see it.
	for _, places := range [][]Place{
		{{"the repository", "/dev/shm/ci/repo"}},
		{{"the repository", t.TempDir()}, {"debussy's executable", "/dev/shm/bin/debussy"}},
	} {
		a := Check(ctx, Host{GOOS: "linux", Path: bin, Probe: works, Places: places})
		if !strings.Contains(a.Problem, "is under /dev") || !strings.Contains(a.Problem, places[len(places)-1].What) {
			t.Errorf("places %v: %+v", places, a)
		}
	}
	if a := Check(ctx, Host{GOOS: "linux", Path: bin, Probe: works, Places: []Place{{"the repository", t.TempDir()}, {"HOME", ""}}}); a.Problem != "" {
		t.Errorf("places off /dev: %+v", a)
	}
}

func TestSplitSettings(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.json"), []byte(`{"model":"x","sandbox":{"enabled":false,"excludedCommands":["curl"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		extra []string
		rest  []string
		want  string
	}{
		{"none", []string{"--max-turns", "9"}, []string{"--max-turns", "9"}, `{}`},
		{"json", []string{"--settings", `{"env":{"A":"1"}}`, "--verbose"}, []string{"--verbose"}, `{"env":{"A":"1"}}`},
		{"file", []string{"--settings=mine.json"}, nil, `{"model":"x","sandbox":{"enabled":false,"excludedCommands":["curl"]}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rest, got, err := SplitSettings(tt.extra, dir)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got)
			if !reflect.DeepEqual(rest, tt.rest) || string(b) != tt.want {
				t.Errorf("SplitSettings = %q, %s; want %q, %s", rest, b, tt.rest, tt.want)
			}
		})
	}
	if _, _, err := SplitSettings([]string{"--settings", "missing.json"}, dir); err == nil {
		t.Error("a missing settings file: no error")
	}
}

func TestGitDirs(t *testing.T) {
	main := t.TempDir()
	wt := filepath.Join(main, ".debussy", "worktrees", "r", "phase-1")
	gitdir := filepath.Join(t.TempDir(), "repo.git", "worktrees", "phase-1")
	for _, d := range []string{wt, gitdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{gitdir, filepath.Dir(filepath.Dir(gitdir))}
	if got := GitDirs(wt); !reflect.DeepEqual(got, want) {
		t.Errorf("GitDirs(worktree) = %q, want %q", got, want)
	}
	if err := os.MkdirAll(filepath.Join(main, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := GitDirs(main); got != nil {
		t.Errorf("GitDirs(repository) = %q, want none: .git is inside it", got)
	}
}

func TestCLIHelperProblem(t *testing.T) {
	pkg := t.TempDir()
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}
	a, ok := arch[runtime.GOARCH]
	if !ok {
		t.Skip("no helper for this architecture")
	}
	helper := filepath.Join(pkg, "vendor", "seccomp", a, "apply-seccomp")
	if err := os.MkdirAll(filepath.Dir(helper), 0o755); err != nil {
		t.Fatal(err)
	}
	cli := filepath.Join(pkg, "cli.js")
	for _, f := range []string{helper, cli} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "claude")
	if err := os.Symlink(cli, link); err != nil {
		t.Fatal(err)
	}
	if p := CLIHelperProblem(link); !strings.Contains(p, "not executable") || !strings.Contains(p, helper) {
		t.Errorf("a helper without the execute bit: %q", p)
	}
	if err := os.Chmod(helper, 0o755); err != nil {
		t.Fatal(err)
	}
	if p := CLIHelperProblem(link); p != "" {
		t.Errorf("an executable helper: %q", p)
	}
	if p := CLIHelperProblem(filepath.Join(t.TempDir(), "claude.exe")); p != "" {
		t.Errorf("a CLI without the helper (it embeds it): %q", p)
	}
}
