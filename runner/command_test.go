package runner

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestStartClaudeNotFound(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "claude")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, bin string }{
		{"not on PATH", "claude-definitely-not-installed"},
		{"missing path", filepath.Join(dir, "nope", "claude")},
		{"not executable", plain},
		{"directory", dir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Start(t.Context(), Spec{Bin: tt.bin, Prompt: "x"})
			if !errors.Is(err, ErrClaudeNotFound) {
				t.Fatalf("err = %v, want ErrClaudeNotFound", err)
			}
			for _, hint := range []string{"--claude-bin", "DEBUSSY_CLAUDE_BIN"} {
				if !strings.Contains(err.Error(), hint) {
					t.Errorf("error %q does not mention %s", err, hint)
				}
			}
		})
	}
}

func TestClaudeArgs(t *testing.T) {
	base := "-p --input-format stream-json --output-format stream-json --verbose"
	const settings = ` --settings {"idleCompaction":false}`
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"defaults", Spec{}, base + settings},
		{"model", Spec{Model: "claude-opus-4-8[1m]"}, base + " --model claude-opus-4-8[1m]" + settings},
		{"bypass", Spec{PermissionMode: "bypassPermissions"}, base + " --dangerously-skip-permissions" + settings},
		{"mode", Spec{PermissionMode: "acceptEdits"}, base + " --permission-mode acceptEdits" + settings},
		{"extra", Spec{ExtraArgs: []string{"--append-system-prompt", "be brief"}}, base + settings + " --append-system-prompt be brief"},
		{"settings", Spec{Settings: map[string]any{"sandbox": map[string]any{"enabled": true}}}, base + ` --settings {"idleCompaction":false,"sandbox":{"enabled":true}}`},
		{"the user's idleCompaction never wins", Spec{Settings: map[string]any{"idleCompaction": true, "model": "x"}}, base + ` --settings {"idleCompaction":false,"model":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(claudeArgs(tt.spec), " "); got != tt.want {
				t.Errorf("args = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestChildEnv(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want []string
	}{
		{"drops CLAUDECODE", Spec{Env: []string{"A=1", "CLAUDECODE=1"}}, []string{"A=1"}},
		{"overrides", Spec{Env: []string{"A=1", "B=2"}, SetEnv: map[string]string{"B": "3", "C": "4"}}, []string{"A=1", "B=3", "C=4"}},
		{"path first", Spec{Env: []string{"PATH=/bin"}, PathPrepend: "/opt/d"}, []string{"PATH=/opt/d:/bin"}},
		{"no path", Spec{Env: []string{}, PathPrepend: "/opt/d"}, []string{"PATH=/opt/d"}},
		{"path from SetEnv", Spec{Env: []string{"PATH=/bin"}, SetEnv: map[string]string{"PATH": "/usr/bin"}, PathPrepend: "/opt/d"}, []string{"PATH=/opt/d:/usr/bin"}},
		{"env file replaces the user's", Spec{Env: []string{"CLAUDE_ENV_FILE=/home/u/env.sh", "PATH=/bin"}, PathPrepend: "/opt/d", ShellEnvFile: "/r/agent-env.sh"},
			[]string{"PATH=/opt/d:/bin", "CLAUDE_ENV_FILE=/r/agent-env.sh"}},
		{"no env file without a directory", Spec{Env: []string{"CLAUDE_ENV_FILE=/home/u/env.sh"}, ShellEnvFile: "/r/agent-env.sh"},
			[]string{"CLAUDE_ENV_FILE=/home/u/env.sh"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := childEnv(tt.spec); !slices.Equal(got, tt.want) {
				t.Errorf("env = %q, want %q", got, tt.want)
			}
		})
	}
}

// A claude_bin that is executable but not a program (a wrapper that lost
// its #! line, a text file, garbage) is refused by LookPath, before any
// work (the sandbox's bubblewrap would hand it to /bin/sh), and by Start,
// both with
// ErrClaudeNotProgram and the fix, saying "start claude:" once.
func TestStartClaudeNotProgram(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name    string
		content []byte
		look    bool // LookPath refuses it already
	}{
		{"text without #!", []byte("claude --version\n"), true},
		{"empty", nil, true},
		{"binary garbage", []byte{0x01, 0x02, 0x03, 0xfe, 0xff, 0x00}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bin := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			if err := os.WriteFile(bin, tt.content, 0o755); err != nil {
				t.Fatal(err)
			}
			if _, err := LookPath(bin); errors.Is(err, ErrClaudeNotProgram) != tt.look {
				t.Errorf("LookPath: %v, want ErrClaudeNotProgram: %v", err, tt.look)
			}
			_, err := Start(t.Context(), Spec{Bin: bin, Prompt: "x", Dir: dir})
			if !errors.Is(err, ErrClaudeNotProgram) {
				t.Fatalf("Start: %v, want ErrClaudeNotProgram", err)
			}
			if msg := err.Error(); strings.Count(msg, "start claude") != 1 || !strings.Contains(msg, "DEBUSSY_CLAUDE_BIN") {
				t.Errorf("message %q: want one \"start claude\" and the fix", msg)
			}
		})
	}
	for _, ok := range []string{"#!/bin/sh\nexit 0\n", "\x7fELF\x02\x01\x01"} {
		bin := filepath.Join(dir, "ok")
		if err := os.WriteFile(bin, []byte(ok), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := LookPath(bin); err != nil {
			t.Errorf("LookPath(%q...): %v", ok[:4], err)
		}
	}
}

// A format the kernel was taught (binfmt_misc: by magic at an offset under
// a mask, or by extension) runs; a disabled entry or binfmt_misc off does
// not teach it.
func TestBinfmtMisc(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	head := []byte("\x01\x02MZ\x90rest")
	if binfmtMisc(dir, "/x/claude", head) {
		t.Error("no status file: binfmt_misc is off, want false")
	}
	write("status", "enabled\n")
	write("register", "")
	write("wine", "disabled\ninterpreter /usr/bin/wine\nflags: \noffset 2\nmagic 4d5a\n")
	if binfmtMisc(dir, "/x/claude", head) {
		t.Error("a disabled entry matched")
	}
	write("qemu", "enabled\ninterpreter /usr/bin/qemu\nflags: F\noffset 2\nmagic 4d5a90\nmask ffffff\n")
	if !binfmtMisc(dir, "/x/claude", head) {
		t.Error("magic 4d5a90 at offset 2 did not match")
	}
	if binfmtMisc(dir, "/x/claude", []byte("\x01\x02MZ")) {
		t.Error("a head shorter than offset+magic matched")
	}
	write("qemu", "enabled\ninterpreter /usr/bin/qemu\nflags: F\noffset 2\nmagic 4d5a00\nmask ffff00\n")
	if !binfmtMisc(dir, "/x/claude", head) {
		t.Error("the mask did not apply")
	}
	write("qemu", "disabled\n")
	write("jar", "enabled\ninterpreter /usr/bin/jexec\nflags: \nextension .jar\n")
	if !binfmtMisc(dir, "/x/claude.jar", head) || binfmtMisc(dir, "/x/claude", head) {
		t.Error("extension .jar: want a match on claude.jar only")
	}
	write("status", "disabled\n")
	if binfmtMisc(dir, "/x/claude.jar", head) {
		t.Error("binfmt_misc disabled, want false")
	}
}
