package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeClaudeScript answers what doctor asks, like the real CLI (answers
// taken from runner/testdata/contextusage), using only shell builtins.
const fakeClaudeScript = `#!/bin/sh
case "$*" in *--version*) echo "2.1.330 (Claude Code)"; exit 0;; esac
case "$*" in *--bogus-flag*) echo "error: unknown option '--bogus-flag'" >&2; exit 1;; esac
case "$*" in *--dangerously-skip-permissions*) [ "$FAKE_REFUSE" = 1 ] && { echo "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons" >&2; exit 1; };; esac
while IFS= read -r line; do
  id=${line#*\"request_id\":\"}; id=${id%%\"*}
  case "$line" in
  *'"subtype":"initialize"'*) echo '{"type":"control_response","response":{"subtype":"success","request_id":"'"$id"'","response":{"commands":[]}}}';;
  *'"subtype":"get_context_usage"'*) [ "$FAKE_NO_CTX" = 1 ] || echo '{"type":"control_response","response":{"subtype":"success","request_id":"'"$id"'","response":{"categories":[{"id":"system_prompt","name":"System prompt","tokens":1965,"kind":"used"},{"id":"autocompact_buffer","name":"Autocompact buffer","tokens":33000,"kind":"buffer"},{"id":"free_space","name":"Free space","tokens":965035,"kind":"free"}],"totalTokens":1965,"maxTokens":1000000,"rawMaxTokens":1000000,"percentage":0,"autocompactSource":"model-default","model":"claude-opus-5-5","autoCompactThreshold":967000,"isAutoCompactEnabled":true}}}';;
  *'"subtype":"interrupt"'*) echo '{"type":"control_response","response":{"subtype":"success","request_id":"'"$id"'","response":{"still_queued":[]}}}';;
  *'"type":"user"'*)
    if [ "$FAKE_LOGIN" = none ]; then
      echo '{"type":"assistant","message":{"id":"x","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"Not logged in · Please run /login"}],"usage":{"input_tokens":0,"output_tokens":0}},"parent_tool_use_id":null,"error":"authentication_failed"}'
      echo '{"type":"result","subtype":"success","is_error":true,"api_error_status":null,"terminal_reason":"api_error","num_turns":1,"result":"Not logged in · Please run /login"}'
      exit 1
    fi
    echo '{"type":"assistant","message":{"id":"m1","model":"claude-opus-5-5","role":"assistant","content":[{"type":"text","text":"OK"}],"usage":{"input_tokens":9000,"output_tokens":1}},"parent_tool_use_id":null}'
    echo '{"type":"result","subtype":"success","is_error":false,"terminal_reason":"completed","num_turns":1,"result":"OK","total_cost_usd":0.01}';;
  esac
done
`

func TestDoctor(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte(fakeClaudeScript), 0o755); err != nil {
		t.Fatal(err)
	}
	type doctorCase struct {
		name     string
		env      map[string]string
		config   string
		wantCode int
		want     []string
		not      []string
	}
	tests := []doctorCase{
		{"a run would work", map[string]string{"IS_SANDBOX": "1"}, "", 0,
			[]string{"ok    claude     " + bin + " (2.1.330 (Claude Code))", "initialize with hook callbacks: answered", "interrupt: answered",
				"get_context_usage: answered", "claude-opus-5-5 (claude's default): window 1M, claude compacts at 967K",
				"ok    login      a short session got its answer", "ok    git        git version", "ok: a run would work here"},
			[]string{"FAIL"}},
		{"no window from claude", map[string]string{"IS_SANDBOX": "1", "FAKE_NO_CTX": "1"}, "", 0,
			[]string{"warn  protocol   get_context_usage: no answer within 3s", "fix: the window comes from debussy's model table"},
			[]string{"FAIL", "ok    model"}},
		{"the config file in effect", map[string]string{"IS_SANDBOX": "1"}, "model: claude-sonnet-4-5\ncontext_window: 250000\n", 0,
			[]string{".debussy.yaml", "context_window 250K set in the config wins"}, nil},
		{"a bad config", map[string]string{"IS_SANDBOX": "1"}, "context_threshold: lots\n", 2,
			[]string{"FAIL  config", "1 problem: a run would not work here"}, nil},
		{"claude missing", map[string]string{"IS_SANDBOX": "1", "DEBUSSY_CLAUDE_BIN": "/nonexistent/claude"}, "", 2,
			[]string{"FAIL  claude", "fix: install Claude Code"}, nil},
		{"an option claude does not know", map[string]string{"IS_SANDBOX": "1"}, "extra_args: [\"--bogus-flag\"]\n", 2,
			[]string{"FAIL  protocol   claude exited with code 1 before answering: error: unknown option '--bogus-flag'",
				"fix: remove or correct it in extra_args"}, nil},
		{"not logged in", map[string]string{"IS_SANDBOX": "1", "FAKE_LOGIN": "none"}, "", 2,
			[]string{"FAIL  login      claude is not logged in", "fix: log in as the user debussy runs as: run `claude login`",
				"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"}, nil},
	}
	if os.Geteuid() == 0 {
		tests = append(tests,
			doctorCase{"root without IS_SANDBOX", map[string]string{"FAKE_REFUSE": "1", "IS_SANDBOX": ""}, "", 2,
				[]string{"FAIL  permission running as root", "fix: set IS_SANDBOX=1 (only in a container or VM you trust), or permission_mode: acceptEdits with allowed_tools",
					"get_context_usage: answered"}, nil},
			doctorCase{"root with acceptEdits and Bash allowed", map[string]string{"FAKE_REFUSE": "1"}, "permission_mode: acceptEdits\nallowed_tools: [Bash]\n", 0,
				[]string{"ok    permission permission_mode acceptEdits"}, nil},
			// The fix the refusal suggests is named in full: acceptEdits
			// alone refuses the Bash calls the agent's work needs.
			doctorCase{"root with acceptEdits alone", map[string]string{"FAKE_REFUSE": "1"}, "permission_mode: acceptEdits\n", 0,
				[]string{"warn  permission permission_mode acceptEdits refuses the agent's Bash calls", `fix: set allowed_tools: ["Bash"]`}, nil})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := gitRepo(t)
			if tt.config != "" {
				if err := os.WriteFile(filepath.Join(dir, ".debussy.yaml"), []byte(tt.config), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"PATH": os.Getenv("PATH"), "DEBUSSY_CLAUDE_BIN": bin}
			for k, v := range tt.env {
				env[k] = v
			}
			code, out, stderr := invoke(t, dir, env, "doctor", "--timeout", "3s")
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\n%s%s", code, tt.wantCode, out, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out, n) {
					t.Errorf("output has %q:\n%s", n, out)
				}
			}
		})
	}
}

// doctor lists the user's hooks on debussy's events and the enabled
// plugins, with what each may change, from a home as claude writes it.
func TestDoctorListsHooksAndPlugins(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte(fakeClaudeScript), 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cfg := filepath.Join(home, ".claude")
	plugin := filepath.Join(cfg, "plugins", "cache", "m", "guard", "1.0.0")
	files := map[string]string{
		filepath.Join(cfg, "settings.json"): `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./keep-going"}]}],
			"PreSkillShellCommand": [{"hooks": [{"type": "command", "command": "skill-guard"}]}],
			"Notification": [{"hooks": [{"type": "command", "command": "notify-send"}]}]}, "enabledPlugins": {"guard@m": true, "quiet@m": true}}`,
		filepath.Join(cfg, "plugins", "installed_plugins.json"): `{"version": 2, "plugins": {"guard@m": [{"installPath": "` + plugin + `"}],
			"quiet@m": [{"installPath": "` + filepath.Join(cfg, "plugins", "cache", "m", "quiet", "1") + `"}]}}`,
		filepath.Join(plugin, "hooks", "hooks.json"): `{"hooks": {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [{"type": "command", "command": "rewrite"}]}]}}`,
	}
	for path, text := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"PATH": os.Getenv("PATH"), "DEBUSSY_CLAUDE_BIN": bin, "HOME": home}
	code, out, stderr := invoke(t, gitRepo(t), env, "doctor", "--timeout", "3s")
	if code != 0 {
		t.Errorf("exit %d, want 0 (warnings only)\n%s%s", code, out, stderr)
	}
	for _, w := range []string{
		`warn  hooks      Stop hook "./keep-going" in ` + filepath.Join(cfg, "settings.json") + ": it can keep the session going after the agent ends its turn, past debussy's done or stop",
		`warn  plugins    PreToolUse Bash|Edit hook "rewrite" in plugin guard@m (enabled in ` + filepath.Join(cfg, "settings.json") + "): it can refuse a tool call or rewrite its input",
		"fix: claude plugin disable guard@m",
		`warn  hooks      PreSkillShellCommand hook "skill-guard" in ` + filepath.Join(cfg, "settings.json") + ": it runs before a skill's shell command",
		"ok    plugins    plugin quiet@m (enabled in " + filepath.Join(cfg, "settings.json") + "): no hooks on debussy's events (PreToolUse, PostToolUse, Stop, PreCompact)",
		"ok: a run would work here",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "notify-send") {
		t.Errorf("a hook on another event is listed:\n%s", out)
	}
}

// git older than 2.38 commits but cannot merge: doctor warns with the
// options that merge; a version it cannot read is shown as it is.
func TestGitVersionFinding(t *testing.T) {
	for _, tt := range []struct{ out, level string }{
		{"git version 2.39.5\n", "ok"},
		{"git version 2.38.0", "ok"},
		{"git version 3.0.1", "ok"},
		{"git version 2.39.3 (Apple Git-146)", "ok"},
		{"git version 2.45.1.windows.1", "ok"},
		{"git version 2.37.7", "warn"},
		{"git version 2.9.5", "warn"},
		{"git version 1.8.3.1", "warn"},
		{"something else", "ok"},
	} {
		f := gitVersionFinding(tt.out, "; commits: staged by git")
		if f.level != tt.level || !strings.HasPrefix(f.text, strings.TrimSpace(tt.out)+"; commits: staged by git") {
			t.Errorf("%q: %s %q, want level %s", tt.out, f.level, f.text, tt.level)
		}
		if f.level == "warn" && (!strings.Contains(f.text, "needs git 2.38 or later") || f.fix == "") {
			t.Errorf("%q: the warning does not say what needs 2.38 and what to do: %q %q", tt.out, f.text, f.fix)
		}
	}
}

// doctor says in one line how `claude -p` is billed for the login the
// environment shows: a subscription's plan limits (and the paused move to
// a separate credit), an API key's account.
func TestBillingFinding(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"subscription", nil, "draws on your plan's usage limits"},
		{"OAuth token", map[string]string{"CLAUDE_CODE_OAUTH_TOKEN": "t"}, "separate monthly credit, then paused it"},
		{"API key", map[string]string{"ANTHROPIC_API_KEY": "k"}, "billed to the key's account"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := billingFinding(func(k string) string { return tc.env[k] })
			if f.name != "billing" || !strings.Contains(f.text, tc.want) || strings.Contains(f.text, "\n") {
				t.Errorf("%+v, want one line saying %q", f, tc.want)
			}
		})
	}
}
