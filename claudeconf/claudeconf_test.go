package claudeconf

import (
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A home and a project laid out as claude 2.1.332 writes them (`claude
// plugin marketplace add`, `claude plugin install`): settings.json's hooks
// and enabledPlugins, plugins/installed_plugins.json, the plugin's cache.
func TestRead(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	cfg := filepath.Join(home, ".claude")
	write(t, filepath.Join(cfg, "settings.json"), `{
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh"}]}],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
  },
  "enabledPlugins": {"guard@localmkt": true, "off@localmkt": false, "cc-plugin-privacy@builtin": true, "gone@localmkt": true, "inline@localmkt": true}
}`)
	write(t, filepath.Join(project, ".claude", "settings.json"), `{"enabledPlugins": {"off@localmkt": true}}`) // the local file is read after it
	write(t, filepath.Join(project, ".claude", "settings.local.json"), `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./keep-going"}]}]}, "enabledPlugins": {"quiet@localmkt": true, "off@localmkt": false}}`)
	cache := filepath.Join(cfg, "plugins", "cache", "localmkt")
	write(t, filepath.Join(cfg, "plugins", "installed_plugins.json"), `{"version": 2, "plugins": {
  "guard@localmkt": [{"scope": "user", "installPath": "`+filepath.Join(cache, "guard", "1.0.0")+`", "version": "1.0.0"}],
  "quiet@localmkt": [{"scope": "project", "installPath": "`+filepath.Join(cache, "quiet", "2.0.0")+`"}],
  "inline@localmkt": [{"scope": "user", "installPath": "`+filepath.Join(cache, "inline", "1.0.0")+`"}],
  "off@localmkt": [{"scope": "user", "installPath": "`+filepath.Join(cache, "off", "1.0.0")+`"}]}}`)
	write(t, filepath.Join(cache, "guard", "1.0.0", "hooks", "hooks.json"), `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo hi"}]}], "SessionStart": [{"hooks": [{"type": "command", "command": "x"}]}]}}`)
	write(t, filepath.Join(cache, "guard", "1.0.0", ".claude-plugin", "plugin.json"), `{"name": "guard"}`)
	write(t, filepath.Join(cache, "quiet", "2.0.0", ".claude-plugin", "plugin.json"), `{"name": "quiet"}`)
	write(t, filepath.Join(cache, "inline", "1.0.0", ".claude-plugin", "plugin.json"), `{"name": "inline", "hooks": {"PreCompact": [{"hooks": [{"type": "command", "command": "save"}]}]}}`)
	write(t, filepath.Join(cache, "off", "1.0.0", "hooks", "hooks.json"), `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "never"}]}]}}`)

	got := Read(DirsFor(func(k string) string { return map[string]string{"HOME": home}[k] }, project))
	local := filepath.Join(project, ".claude", "settings.local.json")
	wantHooks := []Hook{
		{Source: filepath.Join(cfg, "settings.json"), Event: "PreToolUse", Matcher: "Bash", Command: "~/bin/guard.sh"},
		{Source: local, Event: "Stop", Command: "./keep-going"},
	}
	if !reflect.DeepEqual(got.Hooks, wantHooks) {
		t.Errorf("hooks:\n got %+v\nwant %+v", got.Hooks, wantHooks)
	}
	var ids []string
	for _, p := range got.Plugins {
		ids = append(ids, p.ID)
		switch p.ID {
		case "guard@localmkt":
			if want := []Hook{{Source: "plugin guard@localmkt", Event: "PreToolUse", Matcher: "Bash", Command: "echo hi"}}; !reflect.DeepEqual(p.Hooks, want) {
				t.Errorf("guard's hooks %+v, want %+v", p.Hooks, want)
			}
		case "inline@localmkt":
			if len(p.Hooks) != 1 || p.Hooks[0].Event != "PreCompact" {
				t.Errorf("inline's hooks %+v, want its manifest's PreCompact", p.Hooks)
			}
		case "quiet@localmkt":
			if len(p.Hooks) != 0 || p.EnabledIn != local {
				t.Errorf("quiet: %+v", p)
			}
		case "gone@localmkt":
			if p.Path != "" {
				t.Errorf("gone has a path: %+v", p)
			}
		}
	}
	// off: disabled by the local file, read last; builtin: no files.
	if want := []string{"gone@localmkt", "guard@localmkt", "inline@localmkt", "quiet@localmkt"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("plugins %v, want %v", ids, want)
	}
	if len(got.Problems) != 0 {
		t.Errorf("problems: %v", got.Problems)
	}
}

// CLAUDE_CONFIG_DIR is where claude reads instead of ~/.claude; a file
// that does not parse is a problem named with its path, not a silence.
func TestReadConfigDirAndBrokenFile(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "settings.json"), `{"hooks": `)
	got := Read(DirsFor(func(k string) string { return map[string]string{"HOME": "/nonexistent", "CLAUDE_CONFIG_DIR": dir}[k] }, ""))
	if len(got.Problems) != 1 || !strings.Contains(got.Problems[0], filepath.Join(dir, "settings.json")) {
		t.Errorf("problems %v, want the broken settings.json", got.Problems)
	}
	if got := Read(Dirs{}); len(got.Hooks)+len(got.Plugins)+len(got.Problems) != 0 {
		t.Errorf("no directories: %+v", got)
	}
}

// A user hook on PreSkillShellCommand (2.1.332+) is listed with what it
// may change, as those on debussy's own events are; other events are not.
func TestReadPreSkillShellCommand(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	write(t, filepath.Join(home, ".claude", "settings.json"), `{"hooks": {
  "PreSkillShellCommand": [{"hooks": [{"type": "command", "command": "~/bin/skill-guard"}]}],
  "SessionStart": [{"hooks": [{"type": "command", "command": "hello"}]}]}}`)
	f := Read(Dirs{Config: filepath.Join(home, ".claude"), Project: project})
	if len(f.Hooks) != 1 || f.Hooks[0].Event != "PreSkillShellCommand" || f.Hooks[0].Command != "~/bin/skill-guard" {
		t.Fatalf("hooks %+v, want the PreSkillShellCommand one alone", f.Hooks)
	}
	if e := Effect("PreSkillShellCommand"); !strings.Contains(e, "skill") {
		t.Errorf("effect %q", e)
	}
}

// With HOME unset claude still finds ~/.claude (node's os.homedir reads
// the password database), and so does debussy — never a path relative to
// wherever it runs.
func TestDirsForWithoutHome(t *testing.T) {
	u, err := user.Current()
	if err != nil || u.HomeDir == "" {
		t.Skipf("no user entry: %v", err)
	}
	got := DirsFor(func(string) string { return "" }, "")
	if want := filepath.Join(u.HomeDir, ".claude"); got.Config != want {
		t.Errorf("Config = %q, want %q", got.Config, want)
	}
}
