// Package claudeconf reads what the user's own Claude Code configuration
// adds to every session debussy starts: hooks in the settings files and
// enabled plugins' hooks. claude merges them with the hook callbacks
// debussy registers, so one on the same events (PreToolUse, PostToolUse,
// Stop, PreCompact) can change what debussy sees; doctor lists them.
// Only files are read: nothing is run, nothing leaves the machine.
package claudeconf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Events are the hook events debussy answers, in its order.
var Events = []string{"PreToolUse", "PostToolUse", "Stop", "PreCompact"}

// Watched are the events whose user hooks doctor lists: debussy's, and
// those that act on what its sessions run without passing its hooks
// (PreSkillShellCommand, 2.1.332+: before a skill's own shell command).
var Watched = append(slices.Clone(Events), "PreSkillShellCommand")

// Effect is what another hook on event may change for debussy.
func Effect(event string) string {
	switch event {
	case "PreToolUse":
		return "it can refuse a tool call or rewrite its input, so what runs is not what debussy's hook allowed"
	case "PostToolUse":
		return "it can block after a tool or add text the agent reads, which debussy counts as the agent's context"
	case "Stop":
		return "it can keep the session going after the agent ends its turn, past debussy's done or stop"
	case "PreCompact":
		return "it runs where debussy blocks compaction to restart instead; one that allows it or takes long delays the restart"
	case "PreSkillShellCommand":
		return "it runs before a skill's shell command (claude 2.1.332+), which debussy's PreToolUse never sees, and can refuse or change it"
	}
	return ""
}

// Hook is one hook on one of debussy's events.
type Hook struct {
	Source  string // the settings file, or "plugin ID"
	Event   string
	Matcher string // the tools it matches; "" is every tool
	Command string // its command (or prompt) as configured
}

// Plugin is an enabled plugin.
type Plugin struct {
	ID        string // name@marketplace
	EnabledIn string // the settings file that enables it
	Path      string // where claude installed it; "" when not found
	Hooks     []Hook // its hooks on debussy's events
}

// Found is what the configuration adds to debussy's sessions.
type Found struct {
	Hooks   []Hook   // the settings files' hooks on debussy's events
	Plugins []Plugin // enabled plugins, sorted by ID
	// Problems are files that could not be read or parsed: claude may
	// refuse or skip them, debussy cannot say what they hold.
	Problems []string
}

// Dirs are where claude reads its configuration.
type Dirs struct {
	// Config is the user's configuration directory: $CLAUDE_CONFIG_DIR or
	// ~/.claude.
	Config string
	// Project is the repository's root, whose .claude/settings.json and
	// .claude/settings.local.json claude reads too; "" for none.
	Project string
}

// DirsFor returns the directories claude would read for a session in
// project, given its environment lookup.
func DirsFor(getenv func(string) string, project string) Dirs {
	d := Dirs{Config: getenv("CLAUDE_CONFIG_DIR"), Project: project}
	if d.Config == "" {
		home := getenv("HOME")
		if home == "" {
			// claude (node's os.homedir) falls back to the user's entry
			// in the password database, as os/user does.
			if u, err := user.Current(); err == nil {
				home = u.HomeDir
			}
		}
		if home != "" {
			d.Config = filepath.Join(home, ".claude")
		}
	}
	return d
}

// settings is the part of a settings file read here.
type settings struct {
	Hooks          map[string][]matcherGroup  `json:"hooks"`
	EnabledPlugins map[string]json.RawMessage `json:"enabledPlugins"`
}

type matcherGroup struct {
	Matcher string `json:"matcher"`
	Hooks   []struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Prompt  string `json:"prompt"`
	} `json:"hooks"`
}

// Read reads d's settings files (user, then project, then project local:
// a later one's enabledPlugins entry wins, as in claude) and the enabled
// plugins' hooks.
func Read(d Dirs) Found {
	var f Found
	var files []string
	if d.Config != "" {
		files = append(files, filepath.Join(d.Config, "settings.json"))
	}
	if d.Project != "" {
		files = append(files, filepath.Join(d.Project, ".claude", "settings.json"), filepath.Join(d.Project, ".claude", "settings.local.json"))
	}
	enabled := map[string]string{} // plugin ID → the file enabling it; "" disabled
	for _, path := range files {
		var s settings
		ok, err := readJSON(path, &s)
		if err != nil {
			f.Problems = append(f.Problems, err.Error())
			continue
		}
		if !ok {
			continue
		}
		f.Hooks = append(f.Hooks, hooksOf(path, s.Hooks)...)
		for id, v := range s.EnabledPlugins {
			var on bool
			if json.Unmarshal(v, &on) != nil {
				on = string(v) != "false" && string(v) != "null" // a newer form (a version, an object) still enables it
			}
			enabled[id] = ""
			if on {
				enabled[id] = path
			}
		}
	}
	installed := installedPaths(d.Config, &f)
	for id, in := range enabled {
		if in == "" || strings.HasSuffix(id, "@builtin") { // builtin: part of the CLI, no files
			continue
		}
		p := Plugin{ID: id, EnabledIn: in, Path: installed[id]}
		if p.Path != "" {
			p.Hooks = pluginHooks(p, &f)
		}
		f.Plugins = append(f.Plugins, p)
	}
	sort.Slice(f.Plugins, func(i, j int) bool { return f.Plugins[i].ID < f.Plugins[j].ID })
	return f
}

// readJSON decodes path into v; false without the file.
func readJSON(path string, v any) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("parse %s: %w", path, err)
	}
	return true, nil
}

// hooksOf lists hooks' entries on the watched events, in their order.
func hooksOf(source string, hooks map[string][]matcherGroup) []Hook {
	var out []Hook
	for _, ev := range Watched {
		for _, g := range hooks[ev] {
			for _, h := range g.Hooks {
				out = append(out, Hook{Source: source, Event: ev, Matcher: g.Matcher, Command: strings.TrimSpace(h.Command + h.Prompt)})
			}
		}
	}
	return out
}

// installedPaths reads plugins/installed_plugins.json: each plugin's
// install directory (its latest entry).
func installedPaths(config string, f *Found) map[string]string {
	out := map[string]string{}
	if config == "" {
		return out
	}
	var inst struct {
		Plugins map[string][]struct {
			InstallPath string `json:"installPath"`
		} `json:"plugins"`
	}
	ok, err := readJSON(filepath.Join(config, "plugins", "installed_plugins.json"), &inst)
	if err != nil {
		f.Problems = append(f.Problems, err.Error())
	}
	if !ok {
		return out
	}
	for id, entries := range inst.Plugins {
		for _, e := range slices.Backward(entries) {
			if e.InstallPath != "" {
				out[id] = e.InstallPath
				break
			}
		}
	}
	return out
}

// pluginHooks reads a plugin's hooks: hooks/hooks.json, and what its
// manifest's "hooks" names (a file, or the hooks themselves).
func pluginHooks(p Plugin, f *Found) []Hook {
	src := "plugin " + p.ID
	var out []Hook
	var file struct {
		Hooks map[string][]matcherGroup `json:"hooks"`
	}
	if ok, err := readJSON(filepath.Join(p.Path, "hooks", "hooks.json"), &file); err != nil {
		f.Problems = append(f.Problems, err.Error())
	} else if ok {
		out = append(out, hooksOf(src, file.Hooks)...)
	}
	var manifest struct {
		Hooks json.RawMessage `json:"hooks"`
	}
	if ok, err := readJSON(filepath.Join(p.Path, ".claude-plugin", "plugin.json"), &manifest); err != nil {
		f.Problems = append(f.Problems, err.Error())
	} else if ok && len(manifest.Hooks) > 0 {
		var path string
		var inline map[string][]matcherGroup
		switch {
		case json.Unmarshal(manifest.Hooks, &path) == nil && path != "":
			full := filepath.Join(p.Path, filepath.FromSlash(path))
			if full != filepath.Join(p.Path, "hooks", "hooks.json") {
				file.Hooks = nil
				if ok, err := readJSON(full, &file); err != nil {
					f.Problems = append(f.Problems, err.Error())
				} else if ok {
					out = append(out, hooksOf(src, file.Hooks)...)
				}
			}
		case json.Unmarshal(manifest.Hooks, &inline) == nil:
			out = append(out, hooksOf(src, inline)...)
		}
	}
	return out
}
